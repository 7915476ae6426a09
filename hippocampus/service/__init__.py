"""The running service: the composition root, the hosted start and stop, the Windows service, start-up."""
