-- A delivery's generation: raised by every resend and recovery, so an attempt in flight when one is
-- acknowledged does not close the delivery it made due again (the attempt's outcome is kept for the generation
-- it was taken in only).
ALTER TABLE outbox ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
