//! Pipelines built on first use, once per device; a [`Recorder`] that collects a step's
//! dispatches; and a [`Submitter`] that replays them in one command buffer with one uniform
//! upload and cached bind groups.
//!
//! Why: creating buffers and bind groups is expensive in WebGPU. Every dispatch's constants go
//! into one uniform arena at 256-byte slots (bound with a dynamic offset), written once per
//! submission, and bind groups are cached by (kernel, buffers), so a steady-state step creates
//! no GPU objects at all. A pipeline is built when a dispatch of its kernel is first recorded:
//! a software adapter compiles for seconds, and an experiment needs about half of the kernels
//! (the engine records its step's kernels when it is built, so they compile before the first
//! step while the page is still being read).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::context::GpuContext;
use super::kernels::{
    self, Access, ActivationCode, FirstAndOutputParams, GradientsAndForwardParams, Kernel, KernelInfo, KernelParams,
    LinearBackwardParams, LinearForwardParams, NormGradientParams, NormParams, OutputParams, TopLayerAndOutputParams,
};
use super::GpuError;

/// WebGPU's minimum `minUniformBufferOffsetAlignment` guarantee.
const UNIFORM_SLOT_BYTES: u64 = 256;

#[derive(Debug)]
struct Pipeline {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// A kernel and its pipeline once built.
#[derive(Debug)]
struct KernelEntry {
    info: KernelInfo,
    pipeline: OnceLock<Pipeline>,
}

/// The kernels of one device, each compiled into a pipeline when first recorded.
#[derive(Debug)]
pub struct GpuOps {
    device: wgpu::Device,
    kernels: Vec<KernelEntry>,
    /// The most workgroups one dispatch may have (65,535 in WebGPU's default limits).
    max_workgroups: u32,
}

fn compile(device: &wgpu::Device, kernel: &KernelInfo) -> Pipeline {
    let mut entries = vec![wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: None,
        },
        count: None,
    }];
    for (i, &access) in kernel.storage.iter().enumerate() {
        let read_only = access == Access::Read;
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: i as u32 + 1,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        });
    }
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(kernel.name),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(kernel.name),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.name),
        source: wgpu::ShaderSource::Wgsl(kernel.wgsl().into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(kernel.name),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(kernel.entry_point),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    Pipeline { pipeline, layout }
}

fn buffer_len(buffer: &wgpu::Buffer) -> u64 {
    buffer.size() / 4
}

/// The vec4 linear and norm kernels read (and write) whole `vec4<f32>`s: a buffer must hold whole vec4s
/// (as every buffer from [`GpuContext::storage_buffer`] and `zeroed_buffer` does).
fn check_whole_vec4s(buffers: &[&wgpu::Buffer]) -> Result<(), GpuError> {
    match buffers.iter().find(|b| b.size() % 16 != 0) {
        Some(b) => Err(GpuError::Shape(format!(
            "a vec4 kernel's buffer of {} bytes is not whole vec4s",
            b.size()
        ))),
        None => Ok(()),
    }
}

/// `buffer` must hold `needed` f32 values.
fn check(buffer: &wgpu::Buffer, needed: u64, what: &'static str) -> Result<(), GpuError> {
    if buffer_len(buffer) < needed {
        return Err(GpuError::BufferTooSmall {
            what,
            bytes: buffer.size(),
            needed: 4 * needed,
        });
    }
    Ok(())
}

#[derive(Debug)]
enum Command {
    Dispatch {
        kernel: usize,
        slot: usize,
        buffers: Vec<wgpu::Buffer>,
        workgroups: u32,
    },
    Clear(wgpu::Buffer),
    /// Where the timed work begins or ends (see [`Recorder::mark`]); it also ends a pass, so
    /// that the timestamps fall exactly there.
    Mark(TimingMark),
    Copy {
        source: wgpu::Buffer,
        destination: wgpu::Buffer,
        destination_offset: u64,
        bytes: u64,
    },
}

/// The two ends of the span a step's timestamps measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingMark {
    Start,
    End,
}

/// Where an encoded step writes its two timestamps: queries `first` (start) and `first + 1`
/// (end) of `set`.
#[derive(Debug, Clone, Copy)]
pub struct TimestampSlots<'a> {
    pub set: &'a wgpu::QuerySet,
    pub first: u32,
}

/// The commands of one submission, in order, with each dispatch's constants.
#[derive(Debug, Default)]
pub struct Recorder {
    commands: Vec<Command>,
    /// Each dispatch's parameters, one 256-byte slot each.
    uniforms: Vec<u8>,
}

impl Recorder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Zeroes a buffer at this point of the sequence.
    pub fn clear(&mut self, buffer: &wgpu::Buffer) {
        self.commands.push(Command::Clear(buffer.clone()));
    }

    /// The timed span starts or ends here: the first compute pass after `Start` writes the
    /// start timestamp as it begins, the last pass before `End` the end timestamp as it ends.
    pub fn mark(&mut self, mark: TimingMark) {
        self.commands.push(Command::Mark(mark));
    }

    pub fn copy(&mut self, source: &wgpu::Buffer, destination: &wgpu::Buffer, destination_offset: u64, bytes: u64) {
        self.commands.push(Command::Copy {
            source: source.clone(),
            destination: destination.clone(),
            destination_offset,
            bytes,
        });
    }

    fn dispatch(&mut self, kernel: usize, params: &[u8], buffers: &[&wgpu::Buffer], workgroups: u32) {
        let slot = self.dispatch_count();
        self.uniforms.extend_from_slice(params);
        self.uniforms.resize((slot + 1) * UNIFORM_SLOT_BYTES as usize, 0);
        self.commands.push(Command::Dispatch {
            kernel,
            slot,
            buffers: buffers.iter().map(|b| (*b).clone()).collect(),
            workgroups,
        });
    }

    /// Dispatches recorded so far.
    pub fn dispatch_count(&self) -> usize {
        self.uniforms.len() / UNIFORM_SLOT_BYTES as usize
    }
}

/// Replays recorders: owns the uniform arena and the bind-group cache of one engine.
#[derive(Debug, Default)]
pub struct Submitter {
    arena: Option<wgpu::Buffer>,
    slots: usize,
    bind_groups: HashMap<(usize, Vec<wgpu::Buffer>), wgpu::BindGroup>,
}

impl Submitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bind groups created so far (they are reused from then on).
    pub fn cached_bind_groups(&self) -> usize {
        self.bind_groups.len()
    }

    /// Encodes everything `recorder` holds into one command buffer and submits it.
    pub fn submit(&mut self, context: &GpuContext, ops: &GpuOps, recorder: Recorder) {
        let (commands, _) = self.encode(context, ops, recorder, None);
        context.queue.submit([commands]);
    }

    /// Encodes everything `recorder` holds into one command buffer, for the caller to submit
    /// together with other engines' (one submission per step for all side-by-side runs). The
    /// uniform upload is queued now, so it lands before any later submission. With `timestamps`,
    /// the span between the recorder's marks is timed on the GPU; the flag says whether both of
    /// its timestamps are written (so that a slot left from an earlier step is never read).
    pub fn encode(
        &mut self,
        context: &GpuContext,
        ops: &GpuOps,
        recorder: Recorder,
        timestamps: Option<TimestampSlots<'_>>,
    ) -> (wgpu::CommandBuffer, bool) {
        let needed = recorder.dispatch_count().max(1);
        if self.arena.is_none() || needed > self.slots {
            let slots = needed.next_power_of_two().max(64);
            self.arena = Some(context.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("uniform arena"),
                size: slots as u64 * UNIFORM_SLOT_BYTES,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
            self.slots = slots;
            self.bind_groups.clear();
        }
        let arena = match self.arena.clone() {
            Some(arena) => arena,
            None => unreachable_arena(context),
        };
        if !recorder.uniforms.is_empty() {
            context.queue.write_buffer(&arena, 0, &recorder.uniforms);
        }
        let mut encoder = context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("gradlab step"),
        });
        let mut commands = recorder.commands.into_iter().peekable();
        // Whether the next pass begins the timed span, and which timestamps were written.
        let mut starts_span = false;
        let (mut started, mut ended) = (false, false);
        while let Some(command) = commands.next() {
            match command {
                Command::Clear(buffer) => encoder.clear_buffer(&buffer, 0, None),
                Command::Mark(mark) => starts_span = mark == TimingMark::Start,
                Command::Copy {
                    source,
                    destination,
                    destination_offset,
                    bytes,
                } => encoder.copy_buffer_to_buffer(&source, 0, &destination, destination_offset, bytes),
                Command::Dispatch {
                    kernel,
                    slot,
                    buffers,
                    workgroups,
                } => {
                    // Consecutive dispatches share one compute pass.
                    let mut dispatches = vec![(kernel, slot, buffers, workgroups)];
                    while let Some(Command::Dispatch { .. }) = commands.peek() {
                        if let Some(Command::Dispatch {
                            kernel,
                            slot,
                            buffers,
                            workgroups,
                        }) = commands.next()
                        {
                            dispatches.push((kernel, slot, buffers, workgroups));
                        }
                    }
                    let ends_span = matches!(commands.peek(), Some(Command::Mark(TimingMark::End)));
                    let timestamp_writes =
                        timestamps
                            .filter(|_| starts_span || ends_span)
                            .map(|slots| wgpu::ComputePassTimestampWrites {
                                query_set: slots.set,
                                beginning_of_pass_write_index: starts_span.then_some(slots.first),
                                end_of_pass_write_index: ends_span.then_some(slots.first + 1),
                            });
                    if timestamp_writes.is_some() {
                        started |= starts_span;
                        ended |= ends_span;
                    }
                    starts_span = false;
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: None,
                        timestamp_writes,
                    });
                    for (kernel, slot, buffers, workgroups) in dispatches {
                        let Some((name, compiled)) = ops.pipeline(kernel) else {
                            // A recorder holds only indices from `kernel_index`.
                            debug_assert!(false, "kernel {kernel} has no pipeline");
                            continue;
                        };
                        let bind_group =
                            self.bind_groups
                                .entry((kernel, buffers))
                                .or_insert_with_key(|(_, buffers)| {
                                    let mut entries = vec![wgpu::BindGroupEntry {
                                        binding: 0,
                                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                            buffer: &arena,
                                            offset: 0,
                                            size: std::num::NonZeroU64::new(UNIFORM_SLOT_BYTES),
                                        }),
                                    }];
                                    for (i, buffer) in buffers.iter().enumerate() {
                                        entries.push(wgpu::BindGroupEntry {
                                            binding: i as u32 + 1,
                                            resource: buffer.as_entire_binding(),
                                        });
                                    }
                                    context.device.create_bind_group(&wgpu::BindGroupDescriptor {
                                        label: Some(name),
                                        layout: &compiled.layout,
                                        entries: &entries,
                                    })
                                });
                        pass.set_pipeline(&compiled.pipeline);
                        pass.set_bind_group(0, &*bind_group, &[(slot as u64 * UNIFORM_SLOT_BYTES) as u32]);
                        pass.dispatch_workgroups(workgroups, 1, 1);
                    }
                }
            }
        }
        (encoder.finish(), started && ended)
    }
}

/// The arena is created just above; this only keeps the code free of unwrap.
fn unreachable_arena(context: &GpuContext) -> wgpu::Buffer {
    context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("uniform arena"),
        size: UNIFORM_SLOT_BYTES,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

impl GpuOps {
    /// Nothing is compiled yet: see [`GpuOps::compile_all`] and the module's docs.
    pub fn new(context: &GpuContext) -> Self {
        Self {
            device: context.device.clone(),
            max_workgroups: context.device.limits().max_compute_workgroups_per_dimension,
            kernels: kernels::ALL
                .iter()
                .map(|&info| KernelEntry {
                    info,
                    pipeline: OnceLock::new(),
                })
                .collect(),
        }
    }

    /// The kernels of `context`'s device, for the engines of a lab to share.
    #[allow(
        clippy::arc_with_non_send_sync,
        reason = "GpuOps keeps the device to build pipelines on first use: Send and Sync natively, one thread on wasm"
    )]
    pub fn shared(context: &GpuContext) -> Arc<Self> {
        Arc::new(Self::new(context))
    }

    /// Builds every kernel's pipeline now (a test that every kernel compiles on the device).
    pub fn compile_all(&self) {
        for index in 0..self.kernels.len() {
            self.pipeline(index);
        }
    }

    /// Kernels whose pipelines are built.
    pub fn compiled_kernels(&self) -> Vec<&'static str> {
        self.kernels
            .iter()
            .filter(|k| k.pipeline.get().is_some())
            .map(|k| k.info.name)
            .collect()
    }

    /// Kernel `index`'s name and pipeline, built on first use.
    fn pipeline(&self, index: usize) -> Option<(&'static str, &Pipeline)> {
        let kernel = self.kernels.get(index)?;
        Some((
            kernel.info.name,
            kernel.pipeline.get_or_init(|| compile(&self.device, &kernel.info)),
        ))
    }

    /// The names of the kernels `recorder` dispatches, in order: which kernel a shape takes.
    pub fn dispatched_kernels(&self, recorder: &Recorder) -> Vec<&'static str> {
        recorder
            .commands
            .iter()
            .filter_map(|command| match command {
                Command::Dispatch { kernel, .. } => self.kernels.get(*kernel).map(|k| k.info.name),
                _ => None,
            })
            .collect()
    }

    /// The kernel's index, its pipeline started: built when a dispatch is recorded, not when it
    /// is encoded, so that an engine's warm-up recording (see `GpuEngine::new`) starts the
    /// compiles its steps need.
    fn kernel_index(&self, kernel: &KernelInfo) -> usize {
        self.pipeline(kernel.index);
        kernel.index
    }

    /// Records `kernel` over `invocations` threads (in workgroups of the size it declares), with
    /// `params` as its constants and `buffers` at bindings 1, 2, ....
    pub fn run<P: KernelParams, const N: usize>(
        &self,
        recorder: &mut Recorder,
        kernel: &Kernel<P, N>,
        params: &P,
        buffers: [&wgpu::Buffer; N],
        invocations: u32,
    ) -> Result<(), GpuError> {
        let index = self.kernel_index(&kernel.info);
        let workgroups = invocations.div_ceil(kernel.info.workgroup_size).max(1);
        if workgroups > self.max_workgroups {
            return Err(GpuError::TooManyWorkgroups {
                kernel: kernel.info.name,
                workgroups,
                limit: self.max_workgroups,
            });
        }
        recorder.dispatch(index, bytemuck::bytes_of(params), &buffers, workgroups);
        Ok(())
    }

    /// Like [`GpuOps::run`] for kernels that run as exactly one workgroup (the serial half of a
    /// reduction, one invocation).
    pub fn run_one_group<P: KernelParams, const N: usize>(
        &self,
        recorder: &mut Recorder,
        kernel: &Kernel<P, N>,
        params: &P,
        buffers: [&wgpu::Buffer; N],
    ) -> Result<(), GpuError> {
        let index = self.kernel_index(&kernel.info);
        recorder.dispatch(index, bytemuck::bytes_of(params), &buffers, 1);
        Ok(())
    }

    /// `z = x W^T + b` and, unless `params.activation` is the identity, `a = f(z)`.
    pub fn linear_forward(
        &self,
        recorder: &mut Recorder,
        params: LinearForwardParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        z: &wgpu::Buffer,
        a: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_forward(&p, x, parameters, z, a)?;
        let buffers = [x, parameters, z, a];
        match LinearLayout::for_forward(&p) {
            LinearLayout::Vec4 => {
                check_whole_vec4s(&[x, parameters])?;
                let blocks = p.rows.div_ceil(8) * p.fan_out.div_ceil(4);
                self.run(recorder, &kernels::LINEAR_FORWARD, &p, buffers, blocks)
            }
            LinearLayout::Vec4Outputs => {
                check_whole_vec4s(&[z, a])?;
                let blocks = p.rows.div_ceil(8) * (p.fan_out / 4);
                self.run(recorder, &kernels::LINEAR_FORWARD_VEC4_OUT, &p, buffers, blocks)
            }
            LinearLayout::Scalar => {
                let invocations = p.rows.div_ceil(2) * p.fan_out.div_ceil(16) * 4;
                self.run(recorder, &kernels::LINEAR_FORWARD_SCALAR, &p, buffers, invocations)
            }
        }
    }

    /// The output layer's logits from `x`, then softmax and cross-entropy: probabilities into
    /// `probs`, each row's loss into `row_loss` (from `params.loss_offset`), whether its arg-max
    /// is its label into `row_correct` and, with `params.write_gradient`, the gradient of the
    /// weighted loss at the logits into `dlogits`; with `params.write_input_gradient` also
    /// the gradient at the input of the activation that made `x` into `du_below`, as
    /// [`GpuOps::linear_input_gradient`] would write it.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn output_cross_entropy(
        &self,
        recorder: &mut Recorder,
        params: OutputParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        labels: &wgpu::Buffer,
        probs: &wgpu::Buffer,
        row_loss: &wgpu::Buffer,
        row_correct: &wgpu::Buffer,
        dlogits: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_output(&p, x, parameters, labels, row_loss, dlogits, du_below)?;
        let (rows, classes) = (u64::from(p.rows), u64::from(p.classes));
        check(probs, rows * classes, "probabilities")?;
        check(row_correct, rows, "row correctness")?;
        let buffers = [x, parameters, labels, probs, row_loss, row_correct, dlogits, du_below];
        if aligned(&[p.fan_in, p.weight_offset]) && p.classes <= MAX_CLASSES_IN_REGISTERS {
            check_whole_vec4s(&[x, parameters])?;
            if p.write_input_gradient == 1 {
                check_whole_vec4s(&[du_below])?;
            }
            self.run(recorder, &kernels::OUTPUT_CROSS_ENTROPY_VEC4, &p, buffers, p.rows)
        } else {
            self.run(recorder, &kernels::OUTPUT_CROSS_ENTROPY, &p, buffers, p.rows)
        }
    }

    /// Whether a training forward's top hidden layer (`top`, linear with its activation) and
    /// the output layer after it take one dispatch, [`GpuOps::top_layer_and_output`]: a top
    /// layer of whole vec4s at most [`MAX_FUSED_TOP_WIDTH`] wide over at least one row, at most
    /// four classes, and an output pass over the same rows that writes the gradient at the top
    /// layer's activation input (so that it needs neither `z` nor the probabilities), through
    /// an activation other than the identity (for which the forward writes only `z`).
    pub fn fuses_top_layer_and_output(top: &LinearForwardParams, output: &OutputParams) -> bool {
        LinearLayout::for_forward(top) == LinearLayout::Vec4
            && top.rows > 0
            && top.activation != ActivationCode::Identity as u32
            && aligned(&[top.fan_out, output.weight_offset])
            && top.fan_out <= MAX_FUSED_TOP_WIDTH
            && top.rows == output.rows
            && output.fan_in == top.fan_out
            && output.classes <= MAX_CLASSES_IN_REGISTERS
            && output.write_gradient == 1
            && output.write_input_gradient == 1
            && output.activation_below == top.activation
            && ActivationCode::from_code(top.activation).is_some_and(ActivationCode::derivative_from_output)
    }

    /// The top hidden layer's forward (`a = f(x W^T + b)`, `z` left unwritten) and the output
    /// layer's training pass after it ([`GpuOps::output_cross_entropy`] without the
    /// probabilities and correctness) in one dispatch (top_layer_and_output.wgsl), the same
    /// numbers bit for bit; only where [`GpuOps::fuses_top_layer_and_output`].
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn top_layer_and_output(
        &self,
        recorder: &mut Recorder,
        top: LinearForwardParams,
        output: OutputParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        labels: &wgpu::Buffer,
        a: &wgpu::Buffer,
        row_loss: &wgpu::Buffer,
        dlogits: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        if !Self::fuses_top_layer_and_output(&top, &output) {
            return Err(GpuError::Shape(format!(
                "the top layer ({} -> {}) and output layer ({} classes) do not fit one dispatch",
                top.fan_in, top.fan_out, output.classes
            )));
        }
        check_forward(&top, x, parameters, a, a)?;
        check_output(&output, a, parameters, labels, row_loss, dlogits, du_below)?;
        check_whole_vec4s(&[x, parameters, a, du_below])?;
        let params = TopLayerAndOutputParams {
            rows: top.rows,
            fan_in: top.fan_in,
            fan_out: top.fan_out,
            weight_offset: top.weight_offset,
            bias_offset: top.bias_offset,
            x_offset: top.x_offset,
            activation: top.activation,
            classes: output.classes,
            output_weight_offset: output.weight_offset,
            output_bias_offset: output.bias_offset,
            label_offset: output.label_offset,
            gradient_weight: output.gradient_weight,
            loss_offset: output.loss_offset,
            ..TopLayerAndOutputParams::default()
        };
        // One workgroup of MAX_FUSED_TOP_WIDTH / 4 invocations per 8 rows.
        let invocations = top.rows.div_ceil(8) * (MAX_FUSED_TOP_WIDTH / 4);
        let buffers = [x, parameters, labels, a, row_loss, dlogits, du_below];
        self.run(recorder, &kernels::TOP_LAYER_AND_OUTPUT, &params, buffers, invocations)
    }

    /// Adds the weight and bias gradients of `dy` (at the layer's input `x`) into `grads`.
    pub fn linear_parameter_gradient(
        &self,
        recorder: &mut Recorder,
        params: LinearBackwardParams,
        x: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_parameter_gradient(&p, x, dy, grads)?;
        let buffers = [x, dy, grads];
        match LinearLayout::for_parameter_gradient(&p) {
            LinearLayout::Vec4 => {
                check_whole_vec4s(&[x, dy])?;
                let blocks = parameter_gradient_blocks(&p);
                self.run(recorder, &kernels::LINEAR_PARAMETER_GRADIENT, &p, buffers, blocks)
            }
            LinearLayout::Vec4Outputs => {
                check_whole_vec4s(&[dy])?;
                let blocks = vec4_out_parameter_gradient_blocks(&p);
                let kernel = &kernels::LINEAR_PARAMETER_GRADIENT_VEC4_OUT;
                self.run(recorder, kernel, &p, buffers, blocks)
            }
            LinearLayout::Scalar => {
                let invocations = p.fan_out.div_ceil(4) * p.fan_in.div_ceil(8) * 4;
                let kernel = &kernels::LINEAR_PARAMETER_GRADIENT_SCALAR;
                self.run(recorder, kernel, &p, buffers, invocations)
            }
        }
    }

    /// The parameter gradients of the first layer (`first`: from the data `x` and its upstream
    /// gradient `dy`) and of the output layer (`output`: from the top layer's activations
    /// `a_top` and the logit gradient `dlogits`), added into `grads`. One dispatch where the
    /// first layer takes its vec4-output kernel and the output layer has at most four classes
    /// over a width that is a multiple of 4 (first_and_output_parameter_gradients.wgsl), else
    /// the two kernels; the same numbers bit for bit.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn first_and_output_parameter_gradients(
        &self,
        recorder: &mut Recorder,
        first: LinearBackwardParams,
        output: LinearBackwardParams,
        x: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        a_top: &wgpu::Buffer,
        dlogits: &wgpu::Buffer,
        grads: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        // Both halves' sizes are checked before anything is recorded, on either path.
        check_parameter_gradient(&first, x, dy, grads)?;
        check_parameter_gradient(&output, a_top, dlogits, grads)?;
        if !first_and_output_share_a_dispatch(&first, &output) {
            self.linear_parameter_gradient(recorder, output, a_top, dlogits, grads)?;
            return self.linear_parameter_gradient(recorder, first, x, dy, grads);
        }
        check_whole_vec4s(&[dy, a_top])?;
        let params = FirstAndOutputParams {
            rows: first.rows,
            fan_in: first.fan_in,
            fan_out: first.fan_out,
            weight_offset: first.weight_offset,
            bias_offset: first.bias_offset,
            x_offset: first.x_offset,
            classes: output.fan_out,
            output_fan_in: output.fan_in,
            output_weight_offset: output.weight_offset,
            output_bias_offset: output.bias_offset,
            ..FirstAndOutputParams::default()
        };
        // The jobs of the two blocks, as the kernel splits its invocations.
        let jobs = output.fan_in / 4 + vec4_out_parameter_gradient_blocks(&first);
        let buffers = [x, dy, grads, a_top, dlogits];
        self.run(
            recorder,
            &kernels::FIRST_AND_OUTPUT_PARAMETER_GRADIENTS,
            &params,
            buffers,
            jobs,
        )
    }

    /// [`GpuOps::first_and_output_parameter_gradients`] of one micro-batch, then
    /// [`GpuOps::linear_forward`] of the first layer for the next: in one dispatch
    /// (first_and_output_gradients_and_forward.wgsl, the numbers of the separate kernels bit for
    /// bit) where the gradients share a dispatch, the forward takes its vec4-output kernel, it is
    /// the same layer reading the same data, and it writes nothing the gradients read; as the
    /// two otherwise.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn first_and_output_gradients_then_forward(
        &self,
        recorder: &mut Recorder,
        gradients: &FirstAndOutputGradients,
        forward: LinearForwardParams,
        x: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        z: &wgpu::Buffer,
        a: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let g = gradients;
        let (first, output) = (g.first, g.output);
        check_parameter_gradient(&first, &g.x, &g.dy, &g.grads)?;
        check_parameter_gradient(&output, &g.a_top, &g.dlogits, &g.grads)?;
        check_forward(&forward, x, parameters, z, a)?;
        let same_layer = (
            forward.fan_in,
            forward.fan_out,
            forward.weight_offset,
            forward.bias_offset,
        ) == (first.fan_in, first.fan_out, first.weight_offset, first.bias_offset);
        let read_by_gradients = [&g.x, &g.dy, &g.a_top, &g.dlogits, &g.grads];
        let apart = !read_by_gradients.contains(&z) && !read_by_gradients.contains(&a) && *parameters != g.grads;
        let fits = first_and_output_share_a_dispatch(&first, &output)
            && LinearLayout::for_forward(&forward) == LinearLayout::Vec4Outputs
            && forward.rows > 0;
        if !(fits && same_layer && apart && *x == g.x) {
            self.first_and_output_parameter_gradients(
                recorder, first, output, &g.x, &g.dy, &g.a_top, &g.dlogits, &g.grads,
            )?;
            return self.linear_forward(recorder, forward, x, parameters, z, a);
        }
        check_whole_vec4s(&[&g.dy, &g.a_top, z, a])?;
        let params = GradientsAndForwardParams {
            rows: first.rows,
            fan_in: first.fan_in,
            fan_out: first.fan_out,
            weight_offset: first.weight_offset,
            bias_offset: first.bias_offset,
            x_offset: first.x_offset,
            classes: output.fan_out,
            output_fan_in: output.fan_in,
            output_weight_offset: output.weight_offset,
            output_bias_offset: output.bias_offset,
            forward_rows: forward.rows,
            forward_x_offset: forward.x_offset,
            activation: forward.activation,
            ..GradientsAndForwardParams::default()
        };
        // The jobs of the three blocks, as the kernel splits its invocations.
        let jobs = output.fan_in / 4
            + vec4_out_parameter_gradient_blocks(&first)
            + forward.rows.div_ceil(8) * (forward.fan_out / 4);
        let buffers = [x, &g.dy, &g.grads, &g.a_top, &g.dlogits, parameters, z, a];
        self.run(
            recorder,
            &kernels::FIRST_AND_OUTPUT_GRADIENTS_AND_FORWARD,
            &params,
            buffers,
            jobs,
        )
    }

    /// The backward of a linear layer above another: [`GpuOps::linear_parameter_gradient`] and
    /// [`GpuOps::linear_input_gradient`], in one dispatch where both take their vec4 kernels
    /// (linear_backward.wgsl), the same numbers bit for bit.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn linear_backward(
        &self,
        recorder: &mut Recorder,
        params: LinearBackwardParams,
        x: &wgpu::Buffer,
        dy: &wgpu::Buffer,
        grads: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        u_below: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        // Both halves' sizes are checked before anything is recorded, on either path.
        check_parameter_gradient(&p, x, dy, grads)?;
        check_input_gradient(&p, dy, parameters, u_below, du_below)?;
        if !aligned(&[p.fan_in, p.x_offset, p.fan_out, p.weight_offset]) {
            self.linear_parameter_gradient(recorder, p, x, dy, grads)?;
            return self.linear_input_gradient(recorder, p, dy, parameters, u_below, du_below);
        }
        check_whole_vec4s(&[x, dy, parameters, u_below, du_below])?;
        // The jobs of the two vec4 kernels, as linear_backward.wgsl splits its invocations.
        let jobs = parameter_gradient_blocks(&p) + input_gradient_blocks(&p);
        let buffers = [x, dy, grads, parameters, u_below, du_below];
        self.run(recorder, &kernels::LINEAR_BACKWARD, &p, buffers, jobs)
    }

    /// Writes `du_below = (dy W) * f'(u_below)`, the gradient at the input of the activation
    /// below the layer.
    pub fn linear_input_gradient(
        &self,
        recorder: &mut Recorder,
        params: LinearBackwardParams,
        dy: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        u_below: &wgpu::Buffer,
        du_below: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        check_input_gradient(&p, dy, parameters, u_below, du_below)?;
        let buffers = [dy, parameters, u_below, du_below];
        if aligned(&[p.fan_in, p.fan_out, p.weight_offset]) {
            check_whole_vec4s(&buffers)?;
            let blocks = input_gradient_blocks(&p);
            self.run(recorder, &kernels::LINEAR_INPUT_GRADIENT, &p, buffers, blocks)
        } else {
            let invocations = p.rows.div_ceil(4) * p.fan_in.div_ceil(8) * 4;
            let kernel = &kernels::LINEAR_INPUT_GRADIENT_SCALAR;
            self.run(recorder, kernel, &p, buffers, invocations)
        }
    }
}

/// The most classes the output layer's vec4 kernels keep in registers (one vec4 of logits);
/// every dataset of the Lab has two or three.
const MAX_CLASSES_IN_REGISTERS: u32 = 4;

/// The widest top layer that top_layer_and_output.wgsl takes: 4 outputs for each of its
/// workgroup's invocations (`MAX_TOP_VEC4S` there).
pub const MAX_FUSED_TOP_WIDTH: u32 = 64;

/// The parameter gradients of the first and the output layer of one micro-batch
/// ([`GpuOps::first_and_output_parameter_gradients`]), the last dispatch of its backward, held
/// until the next micro-batch's forward can share it
/// ([`GpuOps::first_and_output_gradients_then_forward`]).
#[derive(Debug, Clone)]
pub struct FirstAndOutputGradients {
    pub first: LinearBackwardParams,
    pub output: LinearBackwardParams,
    /// The first layer's input (the data) and the gradient at its output.
    pub x: wgpu::Buffer,
    pub dy: wgpu::Buffer,
    /// The output layer's input (the top hidden layer's activations) and the logits' gradient.
    pub a_top: wgpu::Buffer,
    pub dlogits: wgpu::Buffer,
    pub grads: wgpu::Buffer,
}

impl FirstAndOutputGradients {
    /// Records the gradients on their own.
    pub fn record(&self, ops: &GpuOps, recorder: &mut Recorder) -> Result<(), GpuError> {
        ops.first_and_output_parameter_gradients(
            recorder,
            self.first,
            self.output,
            &self.x,
            &self.dy,
            &self.a_top,
            &self.dlogits,
            &self.grads,
        )
    }
}

/// Whether the first layer's and the output layer's parameter gradients take one dispatch: the
/// first layer's outputs are whole vec4s, the output layer has at most four classes over a
/// width of whole vec4s, and both have the same rows.
fn first_and_output_share_a_dispatch(first: &LinearBackwardParams, output: &LinearBackwardParams) -> bool {
    let output_fits = aligned(&[output.fan_in]) && output.x_offset == 0 && output.fan_out <= MAX_CLASSES_IN_REGISTERS;
    let first_fits = LinearLayout::for_parameter_gradient(first) == LinearLayout::Vec4Outputs;
    first_fits && output_fits && output.rows == first.rows
}

/// The sizes an output pass needs ([`GpuOps::output_cross_entropy`] less the probabilities and
/// correctness), and that an input gradient comes only with the logits' and an activation whose
/// output gives its derivative.
fn check_output(
    p: &OutputParams,
    x: &wgpu::Buffer,
    parameters: &wgpu::Buffer,
    labels: &wgpu::Buffer,
    row_loss: &wgpu::Buffer,
    dlogits: &wgpu::Buffer,
    du_below: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let (rows, fan_in, classes) = (u64::from(p.rows), u64::from(p.fan_in), u64::from(p.classes));
    check_nonempty(p.fan_in, p.classes)?;
    check(x, rows * fan_in, "input")?;
    check(
        parameters,
        u64::from(p.weight_offset) + fan_in * classes,
        "parameters (weight)",
    )?;
    check(parameters, u64::from(p.bias_offset) + classes, "parameters (bias)")?;
    check(labels, u64::from(p.label_offset) + rows, "labels")?;
    check(row_loss, u64::from(p.loss_offset) + rows, "row losses")?;
    if p.write_gradient == 1 {
        check(dlogits, rows * classes, "logit gradient")?;
    }
    if p.write_input_gradient == 1 {
        let derivable =
            ActivationCode::from_code(p.activation_below).is_some_and(ActivationCode::derivative_from_output);
        if p.write_gradient != 1 || !derivable {
            return Err(GpuError::Shape(format!(
                "the output kernel writes an input gradient only with the logit gradient and an activation whose output gives its derivative (activation code {})",
                p.activation_below
            )));
        }
        check(du_below, rows * fan_in, "input gradient")?;
    }
    Ok(())
}

/// The checks of a linear layer's forward, whichever kernel runs it.
fn check_forward(
    p: &LinearForwardParams,
    x: &wgpu::Buffer,
    parameters: &wgpu::Buffer,
    z: &wgpu::Buffer,
    a: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let (rows, fan_in, fan_out) = (u64::from(p.rows), u64::from(p.fan_in), u64::from(p.fan_out));
    check_nonempty(p.fan_in, p.fan_out)?;
    check(x, u64::from(p.x_offset) + rows * fan_in, "input")?;
    check(
        parameters,
        u64::from(p.weight_offset) + fan_in * fan_out,
        "parameters (weight)",
    )?;
    check(parameters, u64::from(p.bias_offset) + fan_out, "parameters (bias)")?;
    check(z, rows * fan_out, "output")?;
    if p.activation != ActivationCode::Identity as u32 {
        check(a, rows * fan_out, "activation output")?;
    }
    Ok(())
}

/// How a linear layer's rows lie in memory, which picks its forward and parameter-gradient
/// kernels (each asks for its own alignment: the forward's inputs and weights, the gradient's
/// inputs and outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinearLayout {
    /// Whole vec4s throughout (linear_forward.wgsl, linear_parameter_gradient.wgsl).
    Vec4,
    /// Outputs in whole vec4s, inputs of any count, as the first layer of 2-D data
    /// (linear_forward_vec4_out.wgsl, linear_parameter_gradient_vec4_out.wgsl: dy loaded four
    /// at a time).
    Vec4Outputs,
    /// Any other shape (linear_forward_scalar.wgsl, linear_parameter_gradient_scalar.wgsl).
    Scalar,
}

impl LinearLayout {
    fn new(vec4: bool, fan_out: u32) -> Self {
        if vec4 {
            LinearLayout::Vec4
        } else if aligned(&[fan_out]) {
            LinearLayout::Vec4Outputs
        } else {
            LinearLayout::Scalar
        }
    }

    fn for_forward(p: &LinearForwardParams) -> Self {
        Self::new(aligned(&[p.fan_in, p.x_offset, p.weight_offset]), p.fan_out)
    }

    fn for_parameter_gradient(p: &LinearBackwardParams) -> Self {
        Self::new(aligned(&[p.fan_in, p.x_offset, p.fan_out]), p.fan_out)
    }
}

/// How a norm layer's statistic sets lie in memory, which picks the kernels that normalize them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormLayout {
    /// Set s is value s of each item, items a multiple of 4 apart (BatchNorm of a layer whose
    /// width is a multiple of 4): four sets per invocation as the lanes of a vec4.
    AcrossSets,
    /// Each set is contiguous and a multiple of 4 long (LayerNorm, GroupNorm): one set per
    /// invocation, four items at a time.
    WithinSets,
    /// Any other shape: one set per invocation, one value at a time.
    Scalar,
}

impl NormLayout {
    pub fn of(params: &NormParams) -> Self {
        let p = params;
        // What the vec4 kernels assume beyond alignment: across sets, set s is feature s; within
        // sets, no set crosses a row.
        if p.one_set_per_feature() && aligned(&[p.sets]) {
            NormLayout::AcrossSets
        } else if p.item_stride == 1
            && p.len > 0
            && p.set_stride == p.len
            && p.width.is_multiple_of(p.len)
            && aligned(&[p.len])
        {
            NormLayout::WithinSets
        } else {
            NormLayout::Scalar
        }
    }
}

impl GpuOps {
    /// A training-mode norm layer over `z`: statistics into `stats` ([means, variances, 1/std]),
    /// the normalized values into `xhat`, scaled and shifted into `out`, and activated into `a`;
    /// with `params.update_running`, BatchNorm's running statistics in `running` too.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn norm_forward(
        &self,
        recorder: &mut Recorder,
        params: NormParams,
        z: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        xhat: &wgpu::Buffer,
        out: &wgpu::Buffer,
        stats: &wgpu::Buffer,
        a: &wgpu::Buffer,
        running: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        let values = u64::from(p.sets) * u64::from(p.len);
        for (buffer, what) in [
            (z, "norm input"),
            (xhat, "normalized"),
            (out, "norm output"),
            (a, "activation"),
        ] {
            check(buffer, values, what)?;
        }
        check(stats, 3 * u64::from(p.sets), "norm statistics")?;
        check(
            parameters,
            u64::from(p.gamma_offset.max(p.beta_offset)) + u64::from(p.width),
            "parameters (norm)",
        )?;
        if p.update_running != 0 {
            // The kernels update running statistics per set: only a set that is a feature has them.
            if !p.one_set_per_feature() {
                return Err(GpuError::Shape(
                    "only BatchNorm-shaped sets (one per feature) have running statistics".into(),
                ));
            }
            check(
                running,
                u64::from(p.running_offset) + 2 * u64::from(p.width),
                "running statistics",
            )?;
        }
        let buffers = [z, parameters, xhat, out, stats, a, running];
        match NormLayout::of(&p) {
            NormLayout::AcrossSets => {
                check_whole_vec4s(&[z, xhat, out, a])?;
                self.run(recorder, &kernels::NORM_FORWARD_ACROSS_SETS, &p, buffers, p.sets / 4)
            }
            NormLayout::WithinSets => {
                check_whole_vec4s(&[z, xhat, out, a])?;
                // LayerNorm and GroupNorm sets: no running statistics, not bound.
                self.run(
                    recorder,
                    &kernels::NORM_FORWARD_WITHIN_SETS,
                    &p,
                    [z, parameters, xhat, out, stats, a],
                    p.sets,
                )
            }
            NormLayout::Scalar => self.run(recorder, &kernels::NORM_FORWARD, &p, buffers, p.sets),
        }
    }

    /// The backward of a training-mode norm layer: adds its scale and shift gradients into
    /// `grads` (each feature's rows in order) and writes the gradient at its input `dz` from the
    /// gradient at its output `dout`. BatchNorm-shaped sets take one dispatch for both (the
    /// invocation that owns a feature's set owns its parameter gradients), LayerNorm- and
    /// GroupNorm-shaped ones one too (some invocations for the parameter gradients, the others
    /// for the sets); the scalar shapes two.
    #[allow(clippy::too_many_arguments, reason = "one buffer per binding of the kernel")]
    pub fn norm_backward(
        &self,
        recorder: &mut Recorder,
        params: NormParams,
        dout: &wgpu::Buffer,
        xhat: &wgpu::Buffer,
        stats: &wgpu::Buffer,
        parameters: &wgpu::Buffer,
        grads: &wgpu::Buffer,
        dz: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let p = params;
        let values = u64::from(p.sets) * u64::from(p.len);
        for (buffer, what) in [
            (dout, "norm output gradient"),
            (xhat, "normalized"),
            (dz, "norm input gradient"),
        ] {
            check(buffer, values, what)?;
        }
        check(stats, 3 * u64::from(p.sets), "norm statistics")?;
        check(
            parameters,
            u64::from(p.gamma_offset) + u64::from(p.width),
            "parameters (norm scale)",
        )?;
        check(
            grads,
            u64::from(p.gamma_offset.max(p.beta_offset)) + u64::from(p.width),
            "gradients (norm)",
        )?;
        let layout = NormLayout::of(&p);
        if layout == NormLayout::AcrossSets {
            check_whole_vec4s(&[dout, xhat, dz])?;
            let buffers = [dout, xhat, stats, parameters, grads, dz];
            return self.run(recorder, &kernels::NORM_BACKWARD_ACROSS_SETS, &p, buffers, p.sets / 4);
        }
        if p.width == 0 || !values.is_multiple_of(u64::from(p.width)) {
            return Err(GpuError::Shape(format!(
                "{values} values are not whole rows of a norm layer {} wide",
                p.width
            )));
        }
        if layout == NormLayout::WithinSets {
            // Sets within rows, whole vec4s long: the width is whole vec4s too.
            check_whole_vec4s(&[dout, xhat, dz])?;
            let buffers = [dout, xhat, stats, parameters, grads, dz];
            let kernel = &kernels::NORM_BACKWARD_WITHIN_SETS;
            return self.run(recorder, kernel, &p, buffers, p.width / 4 + p.sets);
        }
        let gradient_params = NormGradientParams {
            rows: (values / u64::from(p.width)) as u32,
            width: p.width,
            gamma_offset: p.gamma_offset,
            beta_offset: p.beta_offset,
        };
        let buffers = [dout, xhat, grads];
        if aligned(&[p.width]) {
            check_whole_vec4s(&[dout, xhat])?;
            let kernel = &kernels::NORM_BACKWARD_PARAMS_ACROSS_FEATURES;
            self.run(recorder, kernel, &gradient_params, buffers, p.width / 4)?;
        } else {
            self.run(
                recorder,
                &kernels::NORM_BACKWARD_PARAMS,
                &gradient_params,
                buffers,
                p.width,
            )?;
        }
        self.run(
            recorder,
            &kernels::NORM_BACKWARD_INPUT,
            &p,
            [dout, xhat, stats, parameters, dz],
            p.sets,
        )
    }
}

/// Whether every row start and length a vec4 kernel reads is a multiple of 4 values.
fn aligned(values: &[u32]) -> bool {
    values.iter().all(|v| v % 4 == 0)
}

/// The buffer sizes the parameter gradients of a linear layer read and write.
fn check_parameter_gradient(
    p: &LinearBackwardParams,
    x: &wgpu::Buffer,
    dy: &wgpu::Buffer,
    grads: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let (rows, fan_in, fan_out) = (u64::from(p.rows), u64::from(p.fan_in), u64::from(p.fan_out));
    check_nonempty(p.fan_in, p.fan_out)?;
    check(x, u64::from(p.x_offset) + rows * fan_in, "input")?;
    check(dy, rows * fan_out, "upstream gradient")?;
    check(
        grads,
        u64::from(p.weight_offset) + fan_in * fan_out,
        "gradients (weight)",
    )?;
    check(grads, u64::from(p.bias_offset) + fan_out, "gradients (bias)")
}

/// The buffer sizes the input gradient of a linear layer reads and writes.
fn check_input_gradient(
    p: &LinearBackwardParams,
    dy: &wgpu::Buffer,
    parameters: &wgpu::Buffer,
    u_below: &wgpu::Buffer,
    du_below: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let (rows, fan_in, fan_out) = (u64::from(p.rows), u64::from(p.fan_in), u64::from(p.fan_out));
    check_nonempty(p.fan_in, p.fan_out)?;
    check(dy, rows * fan_out, "upstream gradient")?;
    check(
        parameters,
        u64::from(p.weight_offset) + fan_in * fan_out,
        "parameters (weight)",
    )?;
    check(u_below, rows * fan_in, "activation input below")?;
    check(du_below, rows * fan_in, "input gradient")
}

/// Jobs of the vec4 parameter-gradient block (4 outputs x 8 inputs each).
fn parameter_gradient_blocks(p: &LinearBackwardParams) -> u32 {
    (p.fan_out / 4) * p.fan_in.div_ceil(8)
}

/// Jobs of the vec4-output parameter-gradient block (4 outputs x 2 inputs each).
fn vec4_out_parameter_gradient_blocks(p: &LinearBackwardParams) -> u32 {
    (p.fan_out / 4) * p.fan_in.div_ceil(2)
}

/// Jobs of the vec4 input-gradient block (8 rows x 8 inputs each).
fn input_gradient_blocks(p: &LinearBackwardParams) -> u32 {
    p.rows.div_ceil(8) * p.fan_in.div_ceil(8)
}

/// The kernels index the last input and output (`fan_in - 1`); zero rows do nothing.
fn check_nonempty(fan_in: u32, fan_out: u32) -> Result<(), GpuError> {
    if fan_in == 0 || fan_out == 0 {
        return Err(GpuError::Shape(format!(
            "a linear layer of {fan_in} inputs and {fan_out} outputs is empty"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::NormLayout;
    use crate::gpu::engine::norm_params;
    use crate::sim::model::Norm;

    #[test]
    fn norm_layers_take_vec4_kernels_where_their_sets_are_aligned() {
        use NormLayout::{AcrossSets, Scalar, WithinSets};
        for (norm, width, expected) in [
            (Norm::batch_norm(), 64, AcrossSets),
            (Norm::batch_norm(), 12, AcrossSets),
            (Norm::batch_norm(), 6, Scalar),
            (Norm::layer_norm(), 64, WithinSets),
            (Norm::layer_norm(), 10, Scalar),
            (Norm::group_norm(8), 64, WithinSets),
            (Norm::group_norm(16), 64, WithinSets),
            (Norm::group_norm(2), 12, Scalar),
            (Norm::group_norm(64), 64, Scalar),
        ] {
            for rows in [1, 7, 64] {
                let params = norm_params(norm, rows, width, 0, width);
                assert_eq!(NormLayout::of(&params), expected, "{norm:?}, {rows} x {width}");
            }
        }
    }
}
