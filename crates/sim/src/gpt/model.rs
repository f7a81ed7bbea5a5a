//! The tiny GPT's forward and backward passes on the CPU, for one micro-batch of examples.
//!
//! An example is a run of token ids; its inputs are all but its last token and its targets all
//! but its first. A micro-batch's rows are its examples' positions, example after example, with
//! no padding: padding would sit after each example's last token, where causal attention never
//! looks and the loss is masked, so it changes no number (the padded shape only matters for the
//! memory a framework would allocate, which [`padded_tokens`] counts).
//!
//! Parameter gradients are *added* into the gradient vector, each summed over the rows in order
//! (the linear layers, LayerNorms and embeddings alike), so that micro-batches accumulated one
//! after the other give the full batch's gradient bit for bit when each token's loss weight is
//! the same.

use super::attention::{self, Heads};
use super::memory::GptPassBytes;
use super::spec::{GptLayout, LinearOffsets, NormOffsets, LAYER_NORM_EPS};
use super::{gelu, layer_norm};
use crate::real::Real;
use crate::reference::{backward, forward, linear};
use crate::rng::SeededRng;

/// The positions of one micro-batch as rows.
#[derive(Debug, Clone, Default)]
struct Rows {
    /// Each example's first row and its number of input positions.
    sequences: Vec<(usize, usize)>,
    tokens: Vec<u32>,
    positions: Vec<usize>,
    targets: Vec<u32>,
}

impl Rows {
    fn fill(&mut self, examples: &[&[u32]]) {
        self.sequences.clear();
        self.tokens.clear();
        self.positions.clear();
        self.targets.clear();
        for example in examples {
            let len = example.len().saturating_sub(1);
            self.sequences.push((self.tokens.len(), len));
            self.tokens.extend_from_slice(&example[..len]);
            self.positions.extend(0..len);
            self.targets.extend_from_slice(example.get(1..=len).unwrap_or(&[]));
        }
    }

    fn count(&self) -> usize {
        self.tokens.len()
    }

    /// Each example's first row, its length, and where its attention probabilities sit among
    /// the micro-batch's (`[heads, len, len]` per example, one after the other).
    fn attention_spans(&self, heads: Heads) -> impl Iterator<Item = (usize, usize, std::ops::Range<usize>)> + '_ {
        self.sequences.iter().scan(0, move |at, &(start, len)| {
            let probs = *at..*at + heads.probs_len(len);
            *at = probs.end;
            Some((start, len, probs))
        })
    }
}

/// What a LayerNorm keeps for its backward.
#[derive(Debug, Clone, Default)]
struct NormCache<T> {
    xhat: Vec<T>,
    out: Vec<T>,
    rstd: Vec<T>,
}

/// What one block keeps for its backward.
#[derive(Debug, Clone, Default)]
struct BlockCache<T> {
    ln_1: NormCache<T>,
    qkv: Vec<T>,
    /// Each sequence's `[heads, len, len]` probabilities, one after the other.
    probs: Vec<T>,
    attn_y: Vec<T>,
    ln_2: NormCache<T>,
    fc_pre: Vec<T>,
    fc_act: Vec<T>,
    /// GELU's tanh of each element, for its backward.
    fc_tanh: Vec<T>,
}

/// The CPU engine's workspace for the tiny GPT: activations of one micro-batch and scratch. It
/// grows to the largest micro-batch it meets and is reused after that.
#[derive(Debug, Clone)]
pub struct GptModel<T: Real> {
    layout: GptLayout,
    rows: Rows,
    blocks: Vec<BlockCache<T>>,
    ln_f: NormCache<T>,
    residual: Vec<T>,
    probs: Vec<T>,
    // Scratch.
    logits: Vec<T>,
    wide: Vec<T>,
    narrow: Vec<T>,
    narrow_2: Vec<T>,
    dqkv: Vec<T>,
    dp: Vec<T>,
    transposed: Vec<T>,
    /// `lm_head` has no bias: zeros for its forward, and where its backward's bias sums go.
    zero_bias: Vec<T>,
    unused_bias: Vec<T>,
}

/// `buffer` as `len` values: it grows to exactly the largest length asked of it (never by more:
/// its capacity is what the memory experiment counts) and keeps that allocation.
fn sized<T: Real>(buffer: &mut Vec<T>, len: usize) -> &mut [T] {
    if len > buffer.capacity() {
        buffer.reserve_exact(len - buffer.len());
    }
    buffer.resize(len, T::ZERO);
    &mut buffer[..len]
}

impl<T: Real> GptModel<T> {
    pub fn new(layout: GptLayout) -> Self {
        let blocks = vec![BlockCache::default(); layout.spec.layers];
        let zero_bias = vec![T::ZERO; layout.vocab];
        let unused_bias = zero_bias.clone();
        Self {
            layout,
            rows: Rows::default(),
            blocks,
            ln_f: NormCache::default(),
            residual: Vec::new(),
            probs: Vec::new(),
            logits: Vec::new(),
            wide: Vec::new(),
            narrow: Vec::new(),
            narrow_2: Vec::new(),
            dqkv: Vec::new(),
            dp: Vec::new(),
            transposed: Vec::new(),
            zero_bias,
            unused_bias,
        }
    }

    pub fn layout(&self) -> &GptLayout {
        &self.layout
    }

    /// The bytes the buffers that keep activations for the backward have allocated: what the
    /// largest pass so far needed ([`GptPassBytes::cpu`] of its tokens and attention values).
    pub fn activation_bytes(&self) -> GptPassBytes {
        let bytes = |buffer: &Vec<T>| (buffer.capacity() * size_of::<T>()) as u64;
        let norm = |n: &NormCache<T>| bytes(&n.xhat) + bytes(&n.out) + bytes(&n.rstd);
        let per_block = |b: &BlockCache<T>| {
            norm(&b.ln_1)
                + bytes(&b.qkv)
                + bytes(&b.attn_y)
                + norm(&b.ln_2)
                + bytes(&b.fc_pre)
                + bytes(&b.fc_act)
                + bytes(&b.fc_tanh)
        };
        GptPassBytes {
            per_token: bytes(&self.residual) + self.blocks.iter().map(per_block).sum::<u64>() + norm(&self.ln_f),
            attention: self.blocks.iter().map(|b| bytes(&b.probs)).sum(),
            logits: bytes(&self.logits) + bytes(&self.probs),
        }
    }

    /// Forward and backward of one micro-batch: adds `weight · d(sum of the token losses)/dθ`
    /// into `grads` and returns the sum of the token losses (nats) added onto `loss_total`, one
    /// token after the other, so that micro-batches add their losses in the full batch's order.
    pub fn forward_backward(
        &mut self,
        params: &[T],
        examples: &[&[u32]],
        weight: T,
        loss_total: T,
        grads: &mut [T],
    ) -> T {
        let loss = self.forward(params, examples, loss_total);
        self.backward(params, weight, grads);
        loss
    }

    /// The sum of the token losses of `examples`, added onto `loss_total` (no gradient).
    pub fn loss(&mut self, params: &[T], examples: &[&[u32]], loss_total: T) -> T {
        self.forward(params, examples, loss_total)
    }

    /// The next-token probabilities after `inputs` (its last `context` tokens).
    /// Empty without inputs, or with an id outside the vocabulary.
    pub fn next_token_probs(&mut self, params: &[T], inputs: &[u32]) -> Vec<T> {
        if inputs.is_empty() || inputs.iter().any(|&id| id as usize >= self.layout.vocab) {
            return Vec::new();
        }
        let start = inputs.len().saturating_sub(self.layout.spec.context);
        let mut example = inputs[start..].to_vec();
        example.push(0); // a target the caller never reads
        let _ = self.forward(params, &[&example], T::ZERO);
        let v = self.layout.vocab;
        let last = self.rows.count() - 1;
        self.probs[last * v..(last + 1) * v].to_vec()
    }

    /// `count` characters after `prompt`: greedy when `temperature` is 0 (or not a positive
    /// number), else sampled from the softmax at that temperature with a seeded generator (the
    /// same text for the same weights, prompt and seed). Nothing after an empty prompt or one
    /// with an id outside the vocabulary.
    ///
    /// The model sees at most a context of text, which starts at a line's beginning where
    /// `line_break` says lines end: once the context is full, it restarts after the last line
    /// break in it. The model was trained on examples that start at position 0 with a line,
    /// so a window sliding one character at a time would put every later character where it
    /// never saw one.
    pub fn generate(
        &mut self,
        params: &[T],
        prompt: &[u32],
        count: usize,
        temperature: f64,
        seed: u64,
        line_break: Option<u32>,
    ) -> Vec<u32> {
        let mut rng = SeededRng::derive(seed, 77);
        let mut tokens = prompt.to_vec();
        let context = self.layout.spec.context;
        let mut start = tokens.len().saturating_sub(context);
        for _ in 0..count {
            if tokens.len() - start > context {
                let window = &tokens[start..];
                start = match line_break.and_then(|b| window.iter().rposition(|&t| t == b)) {
                    Some(at) if at + 1 < window.len() => start + at + 1,
                    _ => tokens.len() - context,
                };
            }
            let probs = self.next_token_probs(params, &tokens[start..]);
            if probs.is_empty() {
                break;
            }
            let next = if !(temperature > 0.0 && temperature.is_finite()) {
                let mut best = 0;
                for (i, p) in probs.iter().enumerate() {
                    if *p > probs[best] {
                        best = i;
                    }
                }
                best
            } else {
                // (p / p_max)^(1/t), renormalized: the softmax of logits / t, which never
                // underflows to all zeros (the likeliest character weighs 1).
                let ln_max = probs.iter().fold(f64::NEG_INFINITY, |m, p| m.max(p.to_f64())).ln();
                let weights: Vec<f64> = probs
                    .iter()
                    .map(|p| libm::exp((libm::log(p.to_f64()) - ln_max) / temperature))
                    .collect();
                let total: f64 = weights.iter().sum();
                let mut draw = rng.uniform() * total;
                let mut chosen = weights.len() - 1;
                for (i, w) in weights.iter().enumerate() {
                    if draw < *w {
                        chosen = i;
                        break;
                    }
                    draw -= w;
                }
                chosen
            };
            tokens.push(next as u32);
        }
        tokens.split_off(prompt.len().min(tokens.len()))
    }

    fn forward(&mut self, params: &[T], examples: &[&[u32]], loss_total: T) -> T {
        self.rows.fill(examples);
        let rows = self.rows.count();
        let d = self.layout.spec.embedding;
        let heads = Heads {
            width: d,
            heads: self.layout.spec.heads,
        };
        // Embeddings: x = wte[token] + wpe[position].
        let x = sized(&mut self.residual, rows * d);
        for (r, (&token, &position)) in self.rows.tokens.iter().zip(&self.rows.positions).enumerate() {
            let t = &params[self.layout.wte + token as usize * d..][..d];
            let p = &params[self.layout.wpe + position * d..][..d];
            for ((x, &a), &b) in x[r * d..(r + 1) * d].iter_mut().zip(t).zip(p) {
                *x = a + b;
            }
        }
        for (layer, offsets) in self.layout.blocks.iter().enumerate() {
            let cache = &mut self.blocks[layer];
            layer_norm(params, offsets.ln_1, &self.residual, rows, d, &mut cache.ln_1);
            linear_forward(
                params,
                offsets.c_attn,
                &cache.ln_1.out,
                rows,
                d,
                3 * d,
                &mut cache.qkv,
                &mut self.transposed,
            );
            let probs_len = self
                .rows
                .attention_spans(heads)
                .last()
                .map_or(0, |(_, _, probs)| probs.end);
            sized(&mut cache.probs, probs_len);
            sized(&mut cache.attn_y, rows * d);
            for (start, len, probs) in self.rows.attention_spans(heads) {
                attention::forward(
                    heads,
                    &cache.qkv[start * 3 * d..(start + len) * 3 * d],
                    len,
                    &mut cache.probs[probs],
                    &mut cache.attn_y[start * d..(start + len) * d],
                    &mut self.dp,
                );
            }
            linear_forward(
                params,
                offsets.attn_proj,
                &cache.attn_y,
                rows,
                d,
                d,
                &mut self.narrow,
                &mut self.transposed,
            );
            for (x, &a) in self.residual.iter_mut().zip(&self.narrow) {
                *x += a;
            }
            layer_norm(params, offsets.ln_2, &self.residual, rows, d, &mut cache.ln_2);
            linear_forward(
                params,
                offsets.c_fc,
                &cache.ln_2.out,
                rows,
                d,
                4 * d,
                &mut cache.fc_pre,
                &mut self.transposed,
            );
            gelu::forward(
                &cache.fc_pre,
                sized(&mut cache.fc_act, rows * 4 * d),
                sized(&mut cache.fc_tanh, rows * 4 * d),
            );
            linear_forward(
                params,
                offsets.mlp_proj,
                &cache.fc_act,
                rows,
                4 * d,
                d,
                &mut self.narrow,
                &mut self.transposed,
            );
            for (x, &a) in self.residual.iter_mut().zip(&self.narrow) {
                *x += a;
            }
        }
        layer_norm(params, self.layout.ln_f, &self.residual, rows, d, &mut self.ln_f);
        let v = self.layout.vocab;
        let logits = sized(&mut self.logits, rows * v);
        linear::forward(
            &self.ln_f.out,
            rows,
            d,
            &params[self.layout.lm_head..self.layout.lm_head + v * d],
            &self.zero_bias,
            v,
            logits,
            &mut self.transposed,
        );
        let probs = sized(&mut self.probs, rows * v);
        forward::softmax_cross_entropy_onto(loss_total, &self.logits, v, &self.rows.targets, probs)
    }

    fn backward(&mut self, params: &[T], weight: T, grads: &mut [T]) {
        let rows = self.rows.count();
        let d = self.layout.spec.embedding;
        let v = self.layout.vocab;
        let heads = Heads {
            width: d,
            heads: self.layout.spec.heads,
        };
        // The loss: dlogits = weight · (p - onehot), into `logits`'s buffer.
        backward::softmax_cross_entropy(
            &self.probs,
            v,
            &self.rows.targets,
            weight,
            sized(&mut self.logits, rows * v),
        );
        let lm_head = self.layout.lm_head;
        linear::backward(
            &self.ln_f.out,
            rows,
            d,
            &params[lm_head..lm_head + v * d],
            v,
            &self.logits,
            &mut grads[lm_head..lm_head + v * d],
            &mut self.unused_bias,
            Some(sized(&mut self.narrow, rows * d)),
        );
        // The residual stream's gradient lives in `residual` from here on.
        sized(&mut self.residual, rows * d);
        layer_norm_backward(
            params,
            self.layout.ln_f,
            &self.ln_f,
            &self.narrow,
            rows,
            d,
            grads,
            &mut self.residual,
        );
        for (layer, offsets) in self.layout.blocks.iter().enumerate().rev() {
            let cache = &self.blocks[layer];
            // MLP: residual -> c_proj -> GELU -> c_fc -> ln_2, added back onto the residual.
            linear_backward(
                params,
                offsets.mlp_proj,
                &cache.fc_act,
                rows,
                4 * d,
                d,
                &self.residual,
                grads,
                sized(&mut self.wide, rows * 4 * d),
            );
            let dfc_pre = sized(&mut self.dqkv, rows * 4 * d);
            gelu::backward(&cache.fc_pre, &cache.fc_tanh, &self.wide, dfc_pre);
            linear_backward(
                params,
                offsets.c_fc,
                &cache.ln_2.out,
                rows,
                d,
                4 * d,
                &self.dqkv,
                grads,
                sized(&mut self.narrow, rows * d),
            );
            layer_norm_backward_onto(
                params,
                offsets.ln_2,
                &cache.ln_2,
                &self.narrow,
                (rows, d),
                grads,
                &mut self.narrow_2,
                &mut self.residual,
            );
            // Attention: residual -> c_proj -> attention -> c_attn -> ln_1.
            linear_backward(
                params,
                offsets.attn_proj,
                &cache.attn_y,
                rows,
                d,
                d,
                &self.residual,
                grads,
                sized(&mut self.narrow, rows * d),
            );
            sized(&mut self.dqkv, rows * 3 * d);
            for (start, len, probs) in self.rows.attention_spans(heads) {
                attention::backward(
                    heads,
                    &cache.qkv[start * 3 * d..(start + len) * 3 * d],
                    len,
                    &cache.probs[probs],
                    &self.narrow[start * d..(start + len) * d],
                    &mut self.dqkv[start * 3 * d..(start + len) * 3 * d],
                    &mut self.dp,
                );
            }
            linear_backward(
                params,
                offsets.c_attn,
                &cache.ln_1.out,
                rows,
                d,
                3 * d,
                &self.dqkv,
                grads,
                sized(&mut self.narrow, rows * d),
            );
            layer_norm_backward_onto(
                params,
                offsets.ln_1,
                &cache.ln_1,
                &self.narrow,
                (rows, d),
                grads,
                &mut self.narrow_2,
                &mut self.residual,
            );
        }
        // Embeddings: scatter-add each row's gradient into its token's and its position's rows.
        let (wte, wpe) = (self.layout.wte, self.layout.wpe);
        for (r, (&token, &position)) in self.rows.tokens.iter().zip(&self.rows.positions).enumerate() {
            let g = &self.residual[r * d..(r + 1) * d];
            for (t, &g) in grads[wte + token as usize * d..][..d].iter_mut().zip(g) {
                *t += g;
            }
            for (p, &g) in grads[wpe + position * d..][..d].iter_mut().zip(g) {
                *p += g;
            }
        }
    }
}

/// LayerNorm of every row of `input` (`[rows, d]`) into `cache`.
fn layer_norm<T: Real>(
    params: &[T],
    offsets: NormOffsets,
    input: &[T],
    rows: usize,
    d: usize,
    cache: &mut NormCache<T>,
) {
    layer_norm::forward(
        LAYER_NORM_EPS,
        &input[..rows * d],
        d,
        &params[offsets.weight..offsets.weight + d],
        &params[offsets.bias..offsets.bias + d],
        sized(&mut cache.xhat, rows * d),
        sized(&mut cache.out, rows * d),
        sized(&mut cache.rstd, rows),
    );
}

/// Adds the LayerNorm's parameter gradients; writes the input's gradient into `dx`.
#[allow(clippy::too_many_arguments, reason = "a kernel's operands, named at the call")]
fn layer_norm_backward<T: Real>(
    params: &[T],
    offsets: NormOffsets,
    cache: &NormCache<T>,
    dout: &[T],
    rows: usize,
    d: usize,
    grads: &mut [T],
    dx: &mut [T],
) {
    let (dgamma, dbeta) = grads[offsets.weight..offsets.bias + d].split_at_mut(offsets.bias - offsets.weight);
    layer_norm::backward(
        d,
        &cache.xhat[..rows * d],
        &cache.rstd[..rows],
        &params[offsets.weight..offsets.weight + d],
        &dout[..rows * d],
        &mut dgamma[..d],
        dbeta,
        &mut dx[..rows * d],
    );
}

/// [`layer_norm_backward`] whose input gradient is added onto the residual stream's (`scratch`
/// holds it in between).
#[allow(clippy::too_many_arguments, reason = "a kernel's operands, named at the call")]
fn layer_norm_backward_onto<T: Real>(
    params: &[T],
    offsets: NormOffsets,
    cache: &NormCache<T>,
    dout: &[T],
    (rows, d): (usize, usize),
    grads: &mut [T],
    scratch: &mut Vec<T>,
    residual: &mut [T],
) {
    let dx = sized(scratch, rows * d);
    layer_norm_backward(params, offsets, cache, dout, rows, d, grads, dx);
    for (x, &a) in residual.iter_mut().zip(dx.iter()) {
        *x += a;
    }
}

#[allow(clippy::too_many_arguments, reason = "a kernel's operands, named at the call")]
fn linear_forward<T: Real>(
    params: &[T],
    offsets: LinearOffsets,
    x: &[T],
    rows: usize,
    fan_in: usize,
    fan_out: usize,
    y: &mut Vec<T>,
    transposed: &mut Vec<T>,
) {
    linear::forward(
        &x[..rows * fan_in],
        rows,
        fan_in,
        &params[offsets.weight..offsets.weight + fan_out * fan_in],
        &params[offsets.bias..offsets.bias + fan_out],
        fan_out,
        sized(y, rows * fan_out),
        transposed,
    );
}

/// Adds the Linear's weight and bias gradients; writes the input's gradient into `dx`.
#[allow(clippy::too_many_arguments, reason = "a kernel's operands, named at the call")]
fn linear_backward<T: Real>(
    params: &[T],
    offsets: LinearOffsets,
    x: &[T],
    rows: usize,
    fan_in: usize,
    fan_out: usize,
    dy: &[T],
    grads: &mut [T],
    dx: &mut [T],
) {
    let (dw, db) = grads[offsets.weight..offsets.bias + fan_out].split_at_mut(offsets.bias - offsets.weight);
    linear::backward(
        &x[..rows * fan_in],
        rows,
        fan_in,
        &params[offsets.weight..offsets.weight + fan_out * fan_in],
        fan_out,
        &dy[..rows * fan_out],
        &mut dw[..fan_out * fan_in],
        db,
        Some(dx),
    );
}

/// The tokens a framework that pads a micro-batch to its longest example would hold:
/// `examples × (longest − 1)` input positions, against the real ones.
pub fn padded_tokens(examples: &[&[u32]]) -> usize {
    let longest = examples.iter().map(|e| e.len().saturating_sub(1)).max().unwrap_or(0);
    examples.len() * longest
}
