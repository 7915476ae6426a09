"""The tick, read once and decided once: one snapshot of Memory, one pure decision, steps to execute.

`snapshot.read` makes the tick's only reads of Memory's drafts and briefs; `decide.decide` turns that
snapshot, the durable state and the clock into the tick's steps, in order; the chain actor and the
sleeper execute theirs. Nothing downstream lists drafts again, and "is a chain open" is answered in
one place: `Snapshot.chain_open`.
"""
