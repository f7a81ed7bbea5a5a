//! Pipelines for every kernel, built once per device, and typed dispatch helpers that check
//! shapes before anything is encoded.

use super::context::GpuContext;
use super::kernels::{self, Kernel};
use super::GpuError;
use crate::sim::model::Activation;

const WORKGROUP: u32 = 64;

/// Shapes of a linear layer dispatch, mirrored by the `Dims` struct of the linear kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearDims {
    pub rows: u32,
    pub fan_in: u32,
    pub fan_out: u32,
    /// Offsets of W and b inside the parameter buffer.
    pub weight_offset: u32,
    pub bias_offset: u32,
    /// Offset of the first input row inside the input buffer.
    pub x_offset: u32,
}

impl LinearDims {
    fn words(&self) -> [u32; 8] {
        [
            self.rows,
            self.fan_in,
            self.fan_out,
            self.weight_offset,
            self.bias_offset,
            self.x_offset,
            0,
            0,
        ]
    }
}

pub fn activation_code(kind: Activation) -> u32 {
    match kind {
        Activation::Relu => 0,
        Activation::Tanh => 1,
        Activation::Gelu => 2,
    }
}

/// The compiled pipelines, one per kernel, built once per device.
#[derive(Debug)]
pub struct GpuOps {
    pipelines: Vec<(&'static str, wgpu::ComputePipeline)>,
}

fn pipeline(context: &GpuContext, kernel: &Kernel, entry: &str) -> wgpu::ComputePipeline {
    let module = context.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.name),
        source: wgpu::ShaderSource::Wgsl(kernel.source.into()),
    });
    context
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel.name),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        })
}

fn buffer_len(buffer: &wgpu::Buffer) -> u64 {
    buffer.size() / 4
}

fn check(buffer: &wgpu::Buffer, needed: u64, what: &str) -> Result<(), GpuError> {
    if buffer_len(buffer) < needed {
        return Err(GpuError::Shape(format!(
            "{what} holds {} values, the dispatch needs {needed}",
            buffer_len(buffer)
        )));
    }
    Ok(())
}

impl GpuOps {
    pub fn new(context: &GpuContext) -> Self {
        Self {
            pipelines: kernels::ALL
                .iter()
                .map(|kernel| (kernel.name, pipeline(context, kernel, kernel.entry_points[0])))
                .collect(),
        }
    }

    fn pipeline(&self, kernel: &Kernel) -> Result<&wgpu::ComputePipeline, GpuError> {
        self.pipelines
            .iter()
            .find(|(name, _)| *name == kernel.name)
            .map(|(_, p)| p)
            .ok_or_else(|| GpuError::Shape(format!("kernel {} has no pipeline", kernel.name)))
    }

    /// Encodes `kernel` over `invocations` threads (64 per workgroup) with a fresh uniform holding
    /// `uniform` and `buffers` at bindings 1, 2, .... Values are baked per dispatch, so several
    /// micro-batches with different constants can share one command buffer.
    pub fn run(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        kernel: &Kernel,
        uniform: &[u32],
        buffers: &[&wgpu::Buffer],
        invocations: u32,
    ) -> Result<(), GpuError> {
        let pipeline = self.pipeline(kernel)?;
        Self::dispatch(
            context,
            encoder,
            pipeline,
            uniform,
            buffers,
            invocations.div_ceil(WORKGROUP).max(1),
        );
        Ok(())
    }

    /// Like [`GpuOps::run`] for kernels that run as exactly one workgroup (reductions).
    pub fn run_one_group(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        kernel: &Kernel,
        uniform: &[u32],
        buffers: &[&wgpu::Buffer],
    ) -> Result<(), GpuError> {
        let pipeline = self.pipeline(kernel)?;
        Self::dispatch(context, encoder, pipeline, uniform, buffers, 1);
        Ok(())
    }

    fn dispatch(
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        uniform: &[u32],
        buffers: &[&wgpu::Buffer],
        workgroups: u32,
    ) {
        let uniform = context.uniform_buffer("dims", uniform);
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: uniform.as_entire_binding(),
        }];
        for (i, buffer) in buffers.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: buffer.as_entire_binding(),
            });
        }
        let bind_group = context.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(workgroups, 1, 1);
    }

    /// `y = x W^T + b`.
    pub fn linear_forward(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        dims: LinearDims,
        x: &wgpu::Buffer,
        params: &wgpu::Buffer,
        y: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let (rows, fan_in, fan_out) = (u64::from(dims.rows), u64::from(dims.fan_in), u64::from(dims.fan_out));
        check(x, u64::from(dims.x_offset) + rows * fan_in, "input")?;
        check(
            params,
            u64::from(dims.weight_offset) + fan_in * fan_out,
            "parameters (weight)",
        )?;
        check(params, u64::from(dims.bias_offset) + fan_out, "parameters (bias)")?;
        check(y, rows * fan_out, "output")?;
        self.run(
            context,
            encoder,
            &kernels::LINEAR_FORWARD,
            &dims.words(),
            &[x, params, y],
            dims.rows * dims.fan_out,
        )
    }

    /// Adds the weight and bias gradients of `dy` into `grads`.
    pub fn linear_backward_params(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        dims: LinearDims,
        x: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let (rows, fan_in, fan_out) = (u64::from(dims.rows), u64::from(dims.fan_in), u64::from(dims.fan_out));
        check(x, u64::from(dims.x_offset) + rows * fan_in, "input")?;
        check(dy, rows * fan_out, "upstream gradient")?;
        check(
            grads,
            u64::from(dims.weight_offset) + fan_in * fan_out,
            "gradients (weight)",
        )?;
        check(grads, u64::from(dims.bias_offset) + fan_out, "gradients (bias)")?;
        self.run(
            context,
            encoder,
            &kernels::LINEAR_BACKWARD_PARAMS,
            &dims.words(),
            &[x, dy, grads],
            dims.fan_out * (dims.fan_in + 1),
        )
    }

    /// `dx = dy W`.
    pub fn linear_backward_input(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        dims: LinearDims,
        dy: &wgpu::Buffer,
        params: &wgpu::Buffer,
        dx: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let (rows, fan_in, fan_out) = (u64::from(dims.rows), u64::from(dims.fan_in), u64::from(dims.fan_out));
        check(dy, rows * fan_out, "upstream gradient")?;
        check(
            params,
            u64::from(dims.weight_offset) + fan_in * fan_out,
            "parameters (weight)",
        )?;
        check(dx, rows * fan_in, "input gradient")?;
        self.run(
            context,
            encoder,
            &kernels::LINEAR_BACKWARD_INPUT,
            &dims.words(),
            &[dy, params, dx],
            dims.rows * dims.fan_in,
        )
    }

    /// `out = f(u)`.
    pub fn activation_forward(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        kind: Activation,
        len: u32,
        u: &wgpu::Buffer,
        out: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        check(u, u64::from(len), "activation input")?;
        check(out, u64::from(len), "activation output")?;
        self.run(
            context,
            encoder,
            &kernels::ACTIVATION_FORWARD,
            &[len, activation_code(kind), 0, 0],
            &[u, out],
            len,
        )
    }

    /// `du = da * f'(u)`.
    pub fn activation_backward(
        &self,
        context: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        kind: Activation,
        len: u32,
        u: &wgpu::Buffer,
        da: &wgpu::Buffer,
        du: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        check(u, u64::from(len), "activation input")?;
        check(da, u64::from(len), "upstream gradient")?;
        check(du, u64::from(len), "activation gradient")?;
        self.run(
            context,
            encoder,
            &kernels::ACTIVATION_BACKWARD,
            &[len, activation_code(kind), 0, 0],
            &[u, da, du],
            len,
        )
    }
}
