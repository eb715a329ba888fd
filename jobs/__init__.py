"""Background work: which task does which kind of work (the registry), for every layer."""
