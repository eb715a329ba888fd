"""Every way a pair comes in: a manifest import (``importing``, its row checks ``checks``, the
uploaded files ``uploads`` and their size limits ``upload_limits``), a Label Studio export
(``labelstudio/``), synthesis from single photos (``synthesis``), and the known answers that
come with some of them (``gold``)."""
