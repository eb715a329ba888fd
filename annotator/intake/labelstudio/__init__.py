"""A Label Studio export imported as pairs and annotations: what it will do (``plan``), the
files a lead sends (``upload``) and the import itself (``importing``). Reading the export is
pure Python in ``pairdiff.labelstudio``."""
