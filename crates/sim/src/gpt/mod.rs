//! The tiny GPT: a character-level, decoder-only transformer with nanoGPT's architecture and
//! names, trained on real text, and the token-count experiment (how the loss of variable-length,
//! padded examples is divided across accumulated micro-batches).

pub mod attention;
pub mod bench;
pub mod export;
pub mod gelu;
pub mod lab;
pub mod layer_norm;
pub mod memory;
pub mod model;
pub mod scenario;
pub mod spec;
pub mod text;
pub mod trace;
