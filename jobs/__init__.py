"""Background work: Job (states, kinds, progress), its lifecycle and sweeps, and the registry of
which task does which kind of work, for every layer."""
