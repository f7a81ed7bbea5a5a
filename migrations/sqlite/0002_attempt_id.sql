-- One attempt, one credential: the attempt ID the browser sends with its answers (random,
-- 16 to 64 URL-safe characters). A second request with the same ID gets the first credential.
-- Credentials issued before this column, or without an attempt ID, have none.
ALTER TABLE credentials ADD COLUMN attempt_id TEXT;

CREATE UNIQUE INDEX credentials_attempt ON credentials (attempt_id) WHERE attempt_id IS NOT NULL;
