"""waitress, in one place: the bound socket, the kept-selector loop, the bounded clients."""
