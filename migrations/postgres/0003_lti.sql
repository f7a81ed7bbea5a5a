-- LTI 1.3 (crates/issuer/src/lti): the platforms this tool is registered with, their
-- deployments, the invitations to register, the logins in flight, the teachers' deep-linking choices, the sessions of
-- launched learners and the scores waiting for (or delivered to) a platform's gradebook. The
-- SQLite twin has the same tables, columns and meaning. Times are Unix seconds.
CREATE TABLE lti_platforms (
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    auth_login_url TEXT NOT NULL,
    auth_token_url TEXT NOT NULL,
    keyset_url TEXT NOT NULL,
    registered_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, client_id)
);

CREATE TABLE lti_deployments (
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    deployment_id TEXT NOT NULL,
    PRIMARY KEY (issuer, client_id, deployment_id),
    FOREIGN KEY (issuer, client_id) REFERENCES lti_platforms (issuer, client_id)
);

-- An invitation to register by LTI Dynamic Registration (`gradlab issuer lti invite`): the link
-- holds the code, only its SHA-256 is stored; used once (used_at), optionally for one issuer.
CREATE TABLE lti_invites (
    code_sha256 TEXT PRIMARY KEY,
    issuer TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

-- One row per OIDC login initiation: the state and nonce sent to the platform. A launch takes
-- its row once (used_at), so a replayed id_token or state is refused.
CREATE TABLE lti_logins (
    state TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    target_link_uri TEXT NOT NULL,
    -- The platform's postMessage storage frame (lti_storage_target), when it offered one: the
    -- launch then proves it runs in the browser that started the login.
    storage_target TEXT,
    created_at BIGINT NOT NULL,
    used_at BIGINT
);

-- A verified launch: who the platform says the learner is, where from, and what to open. The
-- page holds the session token; only its SHA-256 is stored.
CREATE TABLE lti_sessions (
    token_sha256 TEXT PRIMARY KEY,
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    deployment_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    name TEXT NOT NULL,
    platform_name TEXT NOT NULL,
    context_id TEXT NOT NULL,
    context_title TEXT NOT NULL,
    resource_link_id TEXT NOT NULL,
    target TEXT NOT NULL,
    -- The AGS line item of the resource link (absent: the course asked for no grade).
    lineitem_url TEXT,
    -- 1: the teacher left this experiment ungraded; its completion is posted as progress only.
    progress_only BIGINT NOT NULL DEFAULT 0,
    -- Until the page proves the login's state from the platform's storage: the state it must
    -- show (the session is not usable before); NULL once bound, or when there was no storage.
    binding TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- A teacher's Deep Linking request, between the launch that opened the picker and the choice
-- posted back (once: used_at). The picker's form holds the token; only its SHA-256 is stored.
CREATE TABLE lti_deep_links (
    token_sha256 TEXT PRIMARY KEY,
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    deployment_id TEXT NOT NULL,
    return_url TEXT NOT NULL,
    -- The request's opaque `data`, as JSON text, to send back unchanged.
    data TEXT,
    -- 0: the platform said it ignores line items; 1: it accepts them (or did not say).
    accept_lineitem BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

-- Scores to post to a platform's AGS endpoint: the delivery loop takes the due ones, retries
-- with backoff, and a score survives a restart of the service until the platform accepts it.
CREATE TABLE lti_scores (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    lineitem_url TEXT NOT NULL,
    body TEXT NOT NULL,
    session_sha256 TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    delivered_at BIGINT,
    last_error TEXT
);

CREATE INDEX lti_scores_due ON lti_scores (next_attempt_at) WHERE delivered_at IS NULL;

-- The tool's public keys (JWK JSON), as /lti/jwks.json publishes them: every instance sharing
-- this database registers its own key, so a platform verifies whichever instance signed.
CREATE TABLE lti_tool_keys (
    kid TEXT PRIMARY KEY,
    jwk TEXT NOT NULL,
    registered_at BIGINT NOT NULL
);
