from django import forms


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        help_text="What the token is for, e.g. “laptop” or “CI”, to tell your tokens apart.",
        widget=forms.TextInput(attrs={"placeholder": "laptop", "autocomplete": "off"}),
    )
