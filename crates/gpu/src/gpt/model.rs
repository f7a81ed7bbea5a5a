//! The tiny GPT's forward and backward of one micro-batch on the GPU, recorded from the kernel
//! families in the CPU engine's order (`gradlab_sim::gpt::model`):
//!
//! - forward: `residual_embed`; per block `norm_forward` (ln_1), `linear_forward` (c_attn),
//!   `attention_forward`, `linear_forward` (attn c_proj) and `residual_add`, `norm_forward`
//!   (ln_2), `linear_forward` with GELU fused (c_fc), `linear_forward` (mlp c_proj) and
//!   `residual_add`; `norm_forward` (ln_f); `output_cross_entropy` (lm_head, softmax, the
//!   row losses and, training, `weight · (p − onehot)` and its gradient at ln_f's output);
//! - backward: `linear_parameter_gradient` (lm_head), `norm_backward` (ln_f), per block in
//!   reverse `linear_backward` (mlp c_proj, GELU's derivative applied at c_fc's input),
//!   `linear_backward` (c_fc), `norm_backward` (ln_2) and `residual_add`, `linear_backward`
//!   (attn c_proj), `attention_backward`, `linear_backward` (c_attn), `norm_backward` (ln_1)
//!   and `residual_add`; `residual_embed_backward`.
//!
//! Parameter gradients are added into the gradient buffer, so micro-batches accumulate.
//! `lm_head` has no bias: the parameter and gradient buffers carry `vocab` values after the
//! parameters ([`GptGpuModel::buffer_len`]), zeros that the output kernel reads as its bias and
//! where the lm_head's bias gradient lands unread (as the CPU engine's `zero_bias`).

use std::sync::Arc;

use crate::context::GpuContext;
use crate::kernels::{
    ActivationCode, AttentionParams, LinearBackwardParams, LinearForwardParams, NormParams, OutputParams,
    ResidualParams,
};
use crate::ops::{GpuOps, Recorder};
use crate::GpuError;
use gradlab_sim::gpt::memory::GptPassBytes;
use gradlab_sim::gpt::spec::{GptLayout, LinearOffsets, NormOffsets, LAYER_NORM_EPS};
use gradlab_sim::model::Norm;

use super::rows::{RowSlot, TokenRows};

/// A LayerNorm's saved values.
#[derive(Debug)]
struct NormBuffers {
    xhat: wgpu::Buffer,
    out: wgpu::Buffer,
    stats: wgpu::Buffer,
}

impl NormBuffers {
    fn new(context: &GpuContext, rows: usize, d: usize) -> Self {
        Self {
            xhat: context.zeroed_buffer("layer norm xhat", rows * d),
            out: context.zeroed_buffer("layer norm output", rows * d),
            stats: context.zeroed_buffer("layer norm statistics", 3 * rows),
        }
    }
}

/// What one block keeps for its backward.
#[derive(Debug)]
struct BlockBuffers {
    ln_1: NormBuffers,
    qkv: wgpu::Buffer,
    probs: wgpu::Buffer,
    attn_y: wgpu::Buffer,
    ln_2: NormBuffers,
    fc_pre: wgpu::Buffer,
    fc_act: wgpu::Buffer,
}

/// The GPU workspace of the tiny GPT for micro-batches of up to `rows` rows whose attention
/// probabilities take up to `probs` values; the kernels of `ops`.
#[derive(Debug)]
pub struct GptGpuModel {
    layout: GptLayout,
    ops: Arc<GpuOps>,
    rows: usize,
    probs: usize,
    residual: wgpu::Buffer,
    branch: wgpu::Buffer,
    blocks: Vec<BlockBuffers>,
    ln_f: NormBuffers,
    /// The norm kernels' activated output, which the identity makes a copy nobody reads.
    norm_activation: wgpu::Buffer,
    /// A linear kernel's activated output under the identity: never written, never read.
    unused: wgpu::Buffer,
    logit_probs: wgpu::Buffer,
    row_correct: wgpu::Buffer,
    dlogits: wgpu::Buffer,
    wide: wgpu::Buffer,
    dqkv: wgpu::Buffer,
    narrow: wgpu::Buffer,
    dscores: wgpu::Buffer,
}

impl GptGpuModel {
    /// A workspace for micro-batches of up to `rows` rows and `probs` probabilities.
    pub fn new(context: &GpuContext, ops: Arc<GpuOps>, layout: GptLayout, rows: usize, probs: usize) -> Self {
        let d = layout.spec.embedding;
        let v = layout.vocab;
        let rows = rows.max(1);
        let probs = probs.max(1);
        let blocks: Vec<BlockBuffers> = (0..layout.spec.layers)
            .map(|_| BlockBuffers {
                ln_1: NormBuffers::new(context, rows, d),
                qkv: context.zeroed_buffer("qkv", rows * 3 * d),
                probs: context.zeroed_buffer("attention probabilities", probs),
                attn_y: context.zeroed_buffer("attention output", rows * d),
                ln_2: NormBuffers::new(context, rows, d),
                fc_pre: context.zeroed_buffer("c_fc output", rows * 4 * d),
                fc_act: context.zeroed_buffer("GELU output", rows * 4 * d),
            })
            .collect();
        Self {
            residual: context.zeroed_buffer("residual stream", rows * d),
            branch: context.zeroed_buffer("residual branch", rows * d),
            blocks,
            ln_f: NormBuffers::new(context, rows, d),
            norm_activation: context.zeroed_buffer("norm activation (identity)", rows * d),
            unused: context.zeroed_buffer("unused activation", 1),
            logit_probs: context.zeroed_buffer("next-token probabilities", rows * v),
            row_correct: context.zeroed_buffer("row correctness", rows),
            dlogits: context.zeroed_buffer("logit gradient", rows * v),
            wide: context.zeroed_buffer("MLP gradient", rows * 4 * d),
            dqkv: context.zeroed_buffer("qkv gradient", rows * 3 * d),
            narrow: context.zeroed_buffer("block gradient", rows * d),
            dscores: context.zeroed_buffer("attention scores gradient", probs),
            layout,
            ops,
            rows,
            probs,
        }
    }

    pub fn layout(&self) -> &GptLayout {
        &self.layout
    }

    /// Values of a parameter (or gradient) buffer: the parameters, then `vocab` zeros for
    /// lm_head's missing bias.
    pub fn buffer_len(layout: &GptLayout) -> usize {
        layout.parameter_count + layout.vocab
    }

    /// The bytes of the buffers that keep a pass's activations for its backward, by what they
    /// hold (`GptPassBytes::webgpu` of the capacity; tests/gpt_gpu.rs holds the two together).
    pub fn activation_bytes(&self) -> GptPassBytes {
        let norm = |n: &NormBuffers| n.xhat.size() + n.out.size() + n.stats.size();
        let block = |b: &BlockBuffers| {
            norm(&b.ln_1) + b.qkv.size() + b.attn_y.size() + norm(&b.ln_2) + b.fc_pre.size() + b.fc_act.size()
        };
        GptPassBytes {
            per_token: self.residual.size() + self.blocks.iter().map(block).sum::<u64>() + norm(&self.ln_f),
            attention: self.blocks.iter().map(|b| b.probs.size()).sum(),
            logits: self.logit_probs.size() + self.dlogits.size() + self.row_correct.size(),
        }
    }

    /// The backward's scratch buffers (what a pass holds besides its activations).
    pub fn scratch_bytes(&self) -> u64 {
        [
            &self.branch,
            &self.norm_activation,
            &self.unused,
            &self.wide,
            &self.dqkv,
            &self.narrow,
            &self.dscores,
        ]
        .iter()
        .map(|b| b.size())
        .sum()
    }

    /// The next-token probabilities of the last forward (`[rows, vocab]`).
    pub fn probabilities(&self) -> &wgpu::Buffer {
        &self.logit_probs
    }

    fn check_fits(&self, rows: &TokenRows) -> Result<(), GpuError> {
        if rows.count() > self.rows {
            return Err(GpuError::OverCapacity {
                what: "micro-batch of token rows",
                items: rows.count(),
                capacity: self.rows,
            });
        }
        if rows.probs_len() > self.probs {
            return Err(GpuError::OverCapacity {
                what: "micro-batch's attention probabilities",
                items: rows.probs_len(),
                capacity: self.probs,
            });
        }
        Ok(())
    }

    /// Records the forward of `rows` (written into `slot`): each row's loss (nats) into
    /// `row_loss` from `loss_offset`, the probabilities kept; with `gradient_weight`, the
    /// backward too, adding `weight · d(sum of the row losses)/dθ` into `grads`.
    #[allow(
        clippy::too_many_arguments,
        reason = "a micro-batch's buffers and where its results go"
    )]
    pub fn record(
        &self,
        recorder: &mut Recorder,
        rows: &TokenRows,
        slot: &RowSlot,
        parameters: &wgpu::Buffer,
        row_loss: &wgpu::Buffer,
        loss_offset: usize,
        gradient: Option<(f32, &wgpu::Buffer)>,
    ) -> Result<(), GpuError> {
        self.check_fits(rows)?;
        if rows.count() == 0 {
            return Ok(());
        }
        self.forward(
            recorder,
            rows,
            slot,
            parameters,
            row_loss,
            loss_offset,
            gradient.map(|g| g.0),
        )?;
        if let Some((_, grads)) = gradient {
            self.backward(recorder, rows, slot, parameters, grads)?;
        }
        Ok(())
    }

    fn residual_params(&self, rows: &TokenRows) -> ResidualParams {
        ResidualParams {
            rows: rows.count() as u32,
            width: self.layout.spec.embedding as u32,
            wte_offset: self.layout.wte as u32,
            wpe_offset: self.layout.wpe as u32,
            vocab: self.layout.vocab as u32,
            context: self.layout.spec.context as u32,
            ..ResidualParams::default()
        }
    }

    fn norm_params(&self, rows: &TokenRows, offsets: NormOffsets) -> NormParams {
        let norm = Norm::LayerNorm { eps: LAYER_NORM_EPS };
        NormParams::for_layer(
            norm,
            rows.count(),
            self.layout.spec.embedding,
            offsets.weight,
            offsets.bias,
        )
    }

    fn attention_params(&self, rows: &TokenRows) -> Result<AttentionParams, GpuError> {
        let spec = &self.layout.spec;
        AttentionParams::new(rows.count(), spec.embedding, spec.heads, rows.probs_len())
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "a micro-batch's buffers and where its results go"
    )]
    fn forward(
        &self,
        recorder: &mut Recorder,
        rows: &TokenRows,
        slot: &RowSlot,
        parameters: &wgpu::Buffer,
        row_loss: &wgpu::Buffer,
        loss_offset: usize,
        gradient_weight: Option<f32>,
    ) -> Result<(), GpuError> {
        let ops = &*self.ops;
        let n = rows.count();
        let d = self.layout.spec.embedding;
        let residual = self.residual_params(rows);
        let attention = self.attention_params(rows)?;
        let linear =
            |offsets: LinearOffsets, fan_in: usize, fan_out: usize, activation: ActivationCode| LinearForwardParams {
                rows: n as u32,
                fan_in: fan_in as u32,
                fan_out: fan_out as u32,
                weight_offset: offsets.weight as u32,
                bias_offset: offsets.bias as u32,
                x_offset: 0,
                activation: activation as u32,
                pad0: 0,
            };
        let identity = ActivationCode::Identity;
        ops.residual_embed(recorder, residual, &slot.table, parameters, &self.residual)?;
        for (offsets, block) in self.layout.blocks.iter().zip(&self.blocks) {
            self.layer_norm(recorder, rows, offsets.ln_1, parameters, &block.ln_1)?;
            let c_attn = linear(offsets.c_attn, d, 3 * d, identity);
            ops.linear_forward(recorder, c_attn, &block.ln_1.out, parameters, &block.qkv, &self.unused)?;
            ops.attention_forward(
                recorder,
                attention,
                &slot.table,
                &block.qkv,
                &block.probs,
                &block.attn_y,
            )?;
            let attn_proj = linear(offsets.attn_proj, d, d, identity);
            ops.linear_forward(
                recorder,
                attn_proj,
                &block.attn_y,
                parameters,
                &self.branch,
                &self.unused,
            )?;
            ops.residual_add(recorder, residual, &self.branch, &self.residual)?;
            self.layer_norm(recorder, rows, offsets.ln_2, parameters, &block.ln_2)?;
            let c_fc = linear(offsets.c_fc, d, 4 * d, ActivationCode::Gelu);
            ops.linear_forward(
                recorder,
                c_fc,
                &block.ln_2.out,
                parameters,
                &block.fc_pre,
                &block.fc_act,
            )?;
            let mlp_proj = linear(offsets.mlp_proj, 4 * d, d, identity);
            ops.linear_forward(
                recorder,
                mlp_proj,
                &block.fc_act,
                parameters,
                &self.branch,
                &self.unused,
            )?;
            ops.residual_add(recorder, residual, &self.branch, &self.residual)?;
        }
        self.layer_norm(recorder, rows, self.layout.ln_f, parameters, &self.ln_f)?;
        let output = OutputParams {
            rows: n as u32,
            classes: self.layout.vocab as u32,
            fan_in: d as u32,
            weight_offset: self.layout.lm_head as u32,
            bias_offset: self.layout.parameter_count as u32,
            label_offset: 0,
            gradient_weight: gradient_weight.unwrap_or(0.0),
            write_gradient: u32::from(gradient_weight.is_some()),
            loss_offset: loss_offset as u32,
            write_input_gradient: u32::from(gradient_weight.is_some()),
            activation_below: identity as u32,
            pad0: 0,
        };
        ops.output_cross_entropy(
            recorder,
            output,
            &self.ln_f.out,
            parameters,
            &slot.targets,
            &self.logit_probs,
            row_loss,
            &self.row_correct,
            &self.dlogits,
            // The gradient at ln_f's output.
            &self.narrow,
        )
    }

    fn layer_norm(
        &self,
        recorder: &mut Recorder,
        rows: &TokenRows,
        offsets: NormOffsets,
        parameters: &wgpu::Buffer,
        saved: &NormBuffers,
    ) -> Result<(), GpuError> {
        self.ops.norm_forward(
            recorder,
            self.norm_params(rows, offsets),
            &self.residual,
            parameters,
            &saved.xhat,
            &saved.out,
            &saved.stats,
            &self.norm_activation,
            &self.unused,
        )
    }

    fn backward(
        &self,
        recorder: &mut Recorder,
        rows: &TokenRows,
        slot: &RowSlot,
        parameters: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let ops = &*self.ops;
        let n = rows.count();
        let d = self.layout.spec.embedding;
        let v = self.layout.vocab;
        let residual = self.residual_params(rows);
        let attention = self.attention_params(rows)?;
        let linear =
            |offsets: LinearOffsets, fan_in: usize, fan_out: usize, below: ActivationCode| LinearBackwardParams {
                rows: n as u32,
                fan_in: fan_in as u32,
                fan_out: fan_out as u32,
                weight_offset: offsets.weight as u32,
                bias_offset: offsets.bias as u32,
                x_offset: 0,
                activation_below: below as u32,
                pad0: 0,
            };
        let identity = ActivationCode::Identity;
        let lm_head = LinearOffsets {
            weight: self.layout.lm_head,
            bias: self.layout.parameter_count,
        };
        ops.linear_parameter_gradient(
            recorder,
            linear(lm_head, d, v, identity),
            &self.ln_f.out,
            &self.dlogits,
            grads,
        )?;
        // The residual stream's gradient lives in `residual` from here on; `narrow` holds the
        // gradient at ln_f's output.
        self.layer_norm_backward(
            recorder,
            rows,
            self.layout.ln_f,
            &self.ln_f,
            parameters,
            grads,
            &self.residual,
        )?;
        for (offsets, block) in self.layout.blocks.iter().zip(&self.blocks).rev() {
            let mlp_proj = linear(offsets.mlp_proj, 4 * d, d, ActivationCode::Gelu);
            ops.linear_backward(
                recorder,
                mlp_proj,
                &block.fc_act,
                &self.residual,
                grads,
                parameters,
                &block.fc_pre,
                &self.wide,
            )?;
            let c_fc = linear(offsets.c_fc, d, 4 * d, identity);
            ops.linear_backward(
                recorder,
                c_fc,
                &block.ln_2.out,
                &self.wide,
                grads,
                parameters,
                &self.norm_activation,
                &self.narrow,
            )?;
            self.layer_norm_backward(
                recorder,
                rows,
                offsets.ln_2,
                &block.ln_2,
                parameters,
                grads,
                &self.branch,
            )?;
            ops.residual_add(recorder, residual, &self.branch, &self.residual)?;
            let attn_proj = linear(offsets.attn_proj, d, d, identity);
            ops.linear_backward(
                recorder,
                attn_proj,
                &block.attn_y,
                &self.residual,
                grads,
                parameters,
                &self.norm_activation,
                &self.narrow,
            )?;
            ops.attention_backward(
                recorder,
                attention,
                &slot.table,
                &block.qkv,
                &block.probs,
                &self.narrow,
                &self.dscores,
                &self.dqkv,
            )?;
            let c_attn = linear(offsets.c_attn, d, 3 * d, identity);
            ops.linear_backward(
                recorder,
                c_attn,
                &block.ln_1.out,
                &self.dqkv,
                grads,
                parameters,
                &self.norm_activation,
                &self.narrow,
            )?;
            self.layer_norm_backward(
                recorder,
                rows,
                offsets.ln_1,
                &block.ln_1,
                parameters,
                grads,
                &self.branch,
            )?;
            ops.residual_add(recorder, residual, &self.branch, &self.residual)?;
        }
        ops.residual_embed_backward(recorder, residual, &slot.table, &self.residual, grads)
    }

    /// A LayerNorm's backward from the gradient at its output (in `narrow`): its parameter
    /// gradients added into `grads`, its input's gradient written into `dx`.
    #[allow(clippy::too_many_arguments, reason = "a layer's saved values and gradients")]
    fn layer_norm_backward(
        &self,
        recorder: &mut Recorder,
        rows: &TokenRows,
        offsets: NormOffsets,
        saved: &NormBuffers,
        parameters: &wgpu::Buffer,
        grads: &wgpu::Buffer,
        dx: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        self.ops.norm_backward(
            recorder,
            self.norm_params(rows, offsets),
            &self.narrow,
            &saved.xhat,
            &saved.stats,
            parameters,
            grads,
            dx,
        )
    }
}
