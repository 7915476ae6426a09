"""The cycle: one snapshot of Memory, one pure decision, one executor; the chains, bedtime, the sleep."""
