// Package approval is the durable record that stands between a remote write
// and its dispatch: an [Approval] is asked for ([Store.Prepare]), decided by a
// different, authorized principal ([Store.Approve], [Store.Reject]), claimed
// exactly once just before the write is sent ([Store.Claim]), and closed with
// an honest [Receipt] ([Store.Complete]).
//
// The store, not the process, is the source of truth. Every transition is one
// transaction that is on disk before the call returns, so a process killed at
// any step loses nothing it was told had happened: an approval decided before
// a crash is still decided after it, and a claim taken before a crash is
// still held. A claim is never released. If the process dies between the
// claim and the receipt, or the receipt says the effect is
// [EffectUnknown], the approval keeps its claim until a host records what
// really happened with independent evidence ([Store.Reconcile]). Nothing in
// this package retries a write or guesses its outcome.
//
// Two stores implement [Store], with one lifecycle: [SQLiteStore] on one
// SQLite file (WAL, synchronous=FULL), safe for several goroutines and
// several processes on one machine sharing the file; and [PostgresStore] on
// a PostgreSQL database, for several hosts sharing their approvals, where
// row locks make Claim, Complete and the decisions exactly-once across
// every process. [OpenSQLite] migrates its file; for PostgreSQL the host
// runs [MigratePostgres] and [OpenPostgres] only checks the schema.
//
// The command agnara (cmd/agnara) lists, shows and decides approvals, and
// records reconciliations, on a store's file or PostgreSQL database.
// docs/approvals.md describes the lifecycle and the operator's view; ADR
// 0010 records why effects have three states and why claims are never
// released, ADR 0064 how one lifecycle runs on both databases.
package approval
