-- 0022_dead_letter_claims: a dlq retry claims its letter while it runs
-- (DeadLetterClaim), so that a second retry of the same letter, from
-- another process or through the API, is refused instead of running the
-- item's side effect again. The claim is a lease as a run's is: its
-- process renews it, and a killed one's claim lapses at claim_until.
-- claim_owner and claim_until are NULL together (nobody retries it).
ALTER TABLE dead_letters ADD COLUMN claim_owner TEXT;
ALTER TABLE dead_letters ADD COLUMN claim_until INTEGER;
