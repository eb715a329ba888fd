"""`Authorization: Token <secret>`; kept apart from views so DRF settings can import it early."""

from rest_framework import authentication, exceptions

from accounts.services import token_authenticate


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].decode(errors="replace") != self.keyword:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("use the header 'Authorization: Token <token>'")
        user = token_authenticate(secret=parts[1].decode(errors="replace"))
        if user is None:
            raise exceptions.AuthenticationFailed("invalid or revoked token")
        return user, None

    def authenticate_header(self, request) -> str:
        return self.keyword
