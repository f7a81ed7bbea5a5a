//! The tiny GPT's architecture (nanoGPT's `GPT`, character level) and its flat parameter layout,
//! with nanoGPT's parameter names and PyTorch's shapes (`nn.Linear` stores `[out, in]`).

use serde::{Deserialize, Serialize};

use crate::rng::SeededRng;
use crate::ConfigError;

/// LayerNorm's epsilon, as `nn.LayerNorm`'s default and nanoGPT's.
pub const LAYER_NORM_EPS: f64 = 1e-5;

/// The sizes a learner chooses. The vocabulary comes from the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GptSpec {
    /// Transformer blocks (`n_layer`).
    pub layers: usize,
    /// Embedding width (`n_embd`), a multiple of `heads`.
    pub embedding: usize,
    /// Attention heads (`n_head`).
    pub heads: usize,
    /// Context length in characters (`block_size`): the longest input a position embedding exists for.
    pub context: usize,
}

impl Default for GptSpec {
    /// About 100k parameters: trains visibly within minutes on a laptop's CPU.
    fn default() -> Self {
        Self {
            layers: 2,
            embedding: 64,
            heads: 4,
            context: 64,
        }
    }
}

/// The ranges the Lab offers, as `(field, low, high)`, in the order of [`GptSpec`]'s fields.
pub const LIMITS: [(&str, usize, usize); 4] = [
    ("layers", 1, 4),
    ("embedding", 16, 128),
    ("heads", 1, 4),
    ("context", 16, 128),
];

impl GptSpec {
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let values = [self.layers, self.embedding, self.heads, self.context];
        for ((name, low, high), value) in LIMITS.into_iter().zip(values) {
            if !(low..=high).contains(&value) {
                return Err(ConfigError::new(
                    format!("{field}.{name}"),
                    format!("must be between {low} and {high}, got {value}"),
                ));
            }
        }
        if !self.embedding.is_multiple_of(self.heads) {
            return Err(ConfigError::new(
                format!("{field}.embedding"),
                format!("must be a multiple of the {} heads, got {}", self.heads, self.embedding),
            ));
        }
        Ok(())
    }

    pub fn head_size(&self) -> usize {
        self.embedding / self.heads
    }
}

/// One named tensor in the flat parameter vector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GptTensor {
    /// nanoGPT's name (`transformer.h.0.attn.c_attn.weight`).
    pub name: String,
    /// PyTorch's shape: `[out, in]` for a Linear's weight, `[V, d]` for an embedding.
    pub shape: Vec<usize>,
    pub offset: usize,
    pub len: usize,
    /// Whether AdamW decays it: nanoGPT decays every tensor of two dimensions (weights and
    /// embeddings), never biases or LayerNorm parameters.
    pub decayed: bool,
}

/// Offsets of a LayerNorm's weight and bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NormOffsets {
    pub weight: usize,
    pub bias: usize,
}

/// Offsets of a Linear's weight (`[out, in]`) and bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearOffsets {
    pub weight: usize,
    pub bias: usize,
}

/// One block's tensors: `h.{i}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockOffsets {
    pub ln_1: NormOffsets,
    /// `attn.c_attn`: d -> 3d, q, k and v in that order.
    pub c_attn: LinearOffsets,
    /// `attn.c_proj`: d -> d.
    pub attn_proj: LinearOffsets,
    pub ln_2: NormOffsets,
    /// `mlp.c_fc`: d -> 4d.
    pub c_fc: LinearOffsets,
    /// `mlp.c_proj`: 4d -> d.
    pub mlp_proj: LinearOffsets,
}

/// The flat layout of every parameter, in the order of nanoGPT's `named_parameters()`.
#[derive(Debug, Clone, PartialEq)]
pub struct GptLayout {
    pub spec: GptSpec,
    pub vocab: usize,
    pub tensors: Vec<GptTensor>,
    /// `transformer.wte.weight` `[V, d]`.
    pub wte: usize,
    /// `transformer.wpe.weight` `[context, d]`.
    pub wpe: usize,
    pub blocks: Vec<BlockOffsets>,
    pub ln_f: NormOffsets,
    /// `lm_head.weight` `[V, d]`, no bias, not tied to `wte`.
    pub lm_head: usize,
    pub parameter_count: usize,
}

impl GptLayout {
    pub fn new(spec: GptSpec, vocab: usize) -> Self {
        let d = spec.embedding;
        let mut tensors: Vec<GptTensor> = Vec::new();
        let mut offset = 0;
        let mut push = |name: String, shape: Vec<usize>| {
            let len = shape.iter().product();
            let start = offset;
            tensors.push(GptTensor {
                name,
                decayed: shape.len() == 2,
                shape,
                offset: start,
                len,
            });
            offset += len;
            start
        };
        let wte = push("transformer.wte.weight".into(), vec![vocab, d]);
        let wpe = push("transformer.wpe.weight".into(), vec![spec.context, d]);
        let norm = |push: &mut dyn FnMut(String, Vec<usize>) -> usize, name: String| NormOffsets {
            weight: push(format!("{name}.weight"), vec![d]),
            bias: push(format!("{name}.bias"), vec![d]),
        };
        let linear = |push: &mut dyn FnMut(String, Vec<usize>) -> usize, name: String, out: usize, fan_in: usize| {
            LinearOffsets {
                weight: push(format!("{name}.weight"), vec![out, fan_in]),
                bias: push(format!("{name}.bias"), vec![out]),
            }
        };
        let mut blocks = Vec::with_capacity(spec.layers);
        for i in 0..spec.layers {
            let h = format!("transformer.h.{i}");
            blocks.push(BlockOffsets {
                ln_1: norm(&mut push, format!("{h}.ln_1")),
                c_attn: linear(&mut push, format!("{h}.attn.c_attn"), 3 * d, d),
                attn_proj: linear(&mut push, format!("{h}.attn.c_proj"), d, d),
                ln_2: norm(&mut push, format!("{h}.ln_2")),
                c_fc: linear(&mut push, format!("{h}.mlp.c_fc"), 4 * d, d),
                mlp_proj: linear(&mut push, format!("{h}.mlp.c_proj"), d, 4 * d),
            });
        }
        let ln_f = norm(&mut push, "transformer.ln_f".into());
        let lm_head = push("lm_head.weight".into(), vec![vocab, d]);
        Self {
            spec,
            vocab,
            tensors,
            wte,
            wpe,
            blocks,
            ln_f,
            lm_head,
            parameter_count: offset,
        }
    }

    /// nanoGPT's `_init_weights`: every Linear weight and embedding normal with std 0.02, each
    /// residual projection (`c_proj`, attention's and the MLP's) with std 0.02 / sqrt(2 ·
    /// layers); biases 0; LayerNorm weight 1, bias 0. Each tensor draws from its own sub-stream
    /// of the seed (its index in the layout), so changing one size leaves the others' draws alone.
    pub fn initialize(&self, seed: u64) -> Vec<f64> {
        let mut params = vec![0.0; self.parameter_count];
        let residual_std = 0.02 / libm::sqrt(2.0 * self.spec.layers as f64);
        for (index, tensor) in self.tensors.iter().enumerate() {
            let values = &mut params[tensor.offset..tensor.offset + tensor.len];
            if tensor.name.ends_with("ln_1.weight")
                || tensor.name.ends_with("ln_2.weight")
                || tensor.name.ends_with("ln_f.weight")
            {
                values.fill(1.0);
            } else if tensor.shape.len() == 2 {
                let std = if tensor.name.ends_with("c_proj.weight") {
                    residual_std
                } else {
                    0.02
                };
                let mut rng = SeededRng::derive(seed, 1_000 + index as u64);
                for v in values {
                    *v = rng.normal() * std;
                }
            }
        }
        params
    }

    /// The runs of consecutive parameters AdamW treats alike, `(range, decayed)`: it decays the
    /// matrices, as nanoGPT's `configure_optimizers` does.
    pub fn decay_ranges(&self) -> Vec<(std::ops::Range<usize>, bool)> {
        let mut ranges: Vec<(std::ops::Range<usize>, bool)> = Vec::new();
        for tensor in &self.tensors {
            let range = tensor.offset..tensor.offset + tensor.len;
            match ranges.last_mut() {
                Some((last, decayed)) if *decayed == tensor.decayed && last.end == range.start => last.end = range.end,
                _ => ranges.push((range, tensor.decayed)),
            }
        }
        ranges
    }

    /// Per parameter, whether AdamW decays it ([`Self::decay_ranges`] value by value).
    pub fn decay_mask(&self) -> Vec<bool> {
        self.decay_ranges()
            .into_iter()
            .flat_map(|(range, decayed)| std::iter::repeat_n(decayed, range.len()))
            .collect()
    }

    /// The tensor called `name`, if there is one.
    pub fn tensor(&self, name: &str) -> Option<&GptTensor> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_model_has_about_a_hundred_thousand_parameters_in_nanogpt_order() {
        let layout = GptLayout::new(GptSpec::default(), 65);
        // wte 65·64 + wpe 64·64 + 2 blocks of (2·128 + 64·192+192 + 64·64+64 + 64·256+256 + 256·64+64)
        // + ln_f 128 + lm_head 65·64.
        let block = 2 * 128 + (64 * 192 + 192) + (64 * 64 + 64) + (64 * 256 + 256) + (256 * 64 + 64);
        assert_eq!(layout.parameter_count, 65 * 64 + 64 * 64 + 2 * block + 128 + 65 * 64);
        assert_eq!(layout.parameter_count, 112_512);
        let names: Vec<&str> = layout.tensors.iter().take(6).map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "transformer.wte.weight",
                "transformer.wpe.weight",
                "transformer.h.0.ln_1.weight",
                "transformer.h.0.ln_1.bias",
                "transformer.h.0.attn.c_attn.weight",
                "transformer.h.0.attn.c_attn.bias",
            ]
        );
        let c_attn = layout.tensor("transformer.h.1.attn.c_attn.weight").expect("c_attn");
        assert_eq!(c_attn.shape, [192, 64]);
        assert_eq!(layout.tensors.last().map(|t| t.name.as_str()), Some("lm_head.weight"));
        // The tensors tile the vector with no gap.
        let mut next = 0;
        for t in &layout.tensors {
            assert_eq!(t.offset, next, "{}", t.name);
            next += t.len;
        }
        assert_eq!(next, layout.parameter_count);
    }

    #[test]
    fn initialization_follows_nanogpt() {
        let layout = GptLayout::new(GptSpec::default(), 65);
        let params = layout.initialize(7);
        let values = |name: &str| {
            let t = layout.tensor(name).expect(name);
            params[t.offset..t.offset + t.len].to_vec()
        };
        let std = |v: &[f64]| (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt();
        assert!((std(&values("transformer.h.0.mlp.c_fc.weight")) - 0.02).abs() < 0.001);
        assert!((std(&values("transformer.h.0.mlp.c_proj.weight")) - 0.01).abs() < 0.0005);
        assert!(values("transformer.h.0.ln_1.weight").iter().all(|&w| w == 1.0));
        assert!(values("transformer.h.0.attn.c_attn.bias").iter().all(|&b| b == 0.0));
        assert_eq!(params, layout.initialize(7));
        assert_ne!(params, layout.initialize(8));
    }

    #[test]
    fn sizes_outside_the_labs_ranges_are_refused_with_the_field() {
        assert!(GptSpec::default().validate("model").is_ok());
        let bad = GptSpec {
            heads: 3,
            ..GptSpec::default()
        };
        let error = bad.validate("model").expect_err("64 is no multiple of 3");
        assert_eq!(error.field, "model.embedding");
        let bad = GptSpec {
            context: 256,
            ..GptSpec::default()
        };
        assert_eq!(bad.validate("model").expect_err("too long").field, "model.context");
    }
}
