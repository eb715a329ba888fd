"""Label Studio interoperability, pure Python: ``read`` (an export of two-image tasks),
``config`` (which tag means what), ``mapping`` (the lead's value mapping), ``refs`` (image
references matched to files), ``results`` (one annotation's results), ``skeleton`` (a mapping
to fill in for what a preview found unmapped) and ``write`` (releases as Label Studio tasks)."""
