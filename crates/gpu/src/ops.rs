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
use super::kernels::{self, Access, Kernel, KernelId, KernelInfo, KernelParams};
use super::GpuError;

pub use super::kernels::output::MAX_FUSED_TOP_WIDTH;

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
    /// Family by family, as [`kernels::FAMILIES`].
    kernels: Vec<Vec<KernelEntry>>,
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

pub(crate) fn buffer_len(buffer: &wgpu::Buffer) -> u64 {
    buffer.size() / 4
}

/// The vec4 linear and norm kernels read (and write) whole `vec4<f32>`s: a buffer must hold whole vec4s
/// (as every buffer from [`GpuContext::storage_buffer`] and `zeroed_buffer` does).
pub(crate) fn check_whole_vec4s(buffers: &[&wgpu::Buffer]) -> Result<(), GpuError> {
    match buffers.iter().find(|b| b.size() % 16 != 0) {
        Some(b) => Err(GpuError::Shape(format!(
            "a vec4 kernel's buffer of {} bytes is not whole vec4s",
            b.size()
        ))),
        None => Ok(()),
    }
}

/// `buffer` must hold `needed` f32 values.
pub(crate) fn check(buffer: &wgpu::Buffer, needed: u64, what: &'static str) -> Result<(), GpuError> {
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
        kernel: KernelId,
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

    fn dispatch(&mut self, kernel: KernelId, params: &[u8], buffers: &[&wgpu::Buffer], workgroups: u32) {
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
    bind_groups: HashMap<(KernelId, Vec<wgpu::Buffer>), wgpu::BindGroup>,
    /// Compute dispatches of the last recorder encoded.
    last_dispatch_count: usize,
}

impl Submitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bind groups created so far (they are reused from then on).
    pub fn cached_bind_groups(&self) -> usize {
        self.bind_groups.len()
    }

    /// Compute dispatches of the last recorder encoded.
    pub fn last_dispatch_count(&self) -> usize {
        self.last_dispatch_count
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
        self.last_dispatch_count = recorder.dispatch_count();
        let needed = self.last_dispatch_count.max(1);
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
                            // A recorder holds only ids from `kernel_id`.
                            debug_assert!(false, "kernel {kernel:?} has no pipeline");
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
            kernels: kernels::FAMILIES
                .iter()
                .map(|family| {
                    family
                        .iter()
                        .map(|&info| KernelEntry {
                            info,
                            pipeline: OnceLock::new(),
                        })
                        .collect()
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
        for kernel in self.kernels.iter().flatten() {
            self.pipeline(kernel.info.id);
        }
    }

    /// Kernels whose pipelines are built.
    pub fn compiled_kernels(&self) -> Vec<&'static str> {
        self.kernels
            .iter()
            .flatten()
            .filter(|k| k.pipeline.get().is_some())
            .map(|k| k.info.name)
            .collect()
    }

    /// Kernel `id`'s name and pipeline, built on first use.
    fn pipeline(&self, id: KernelId) -> Option<(&'static str, &Pipeline)> {
        let kernel = self.kernels.get(id.family)?.get(id.index)?;
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
                Command::Dispatch { kernel, .. } => self.pipeline_name(*kernel),
                _ => None,
            })
            .collect()
    }

    fn pipeline_name(&self, id: KernelId) -> Option<&'static str> {
        Some(self.kernels.get(id.family)?.get(id.index)?.info.name)
    }

    /// The kernel's id, its pipeline started: built when a dispatch is recorded, not when it
    /// is encoded, so that an engine's warm-up recording (see `GpuEngine::new`) starts the
    /// compiles its steps need. An id that leads to another kernel (or none) is refused, so that
    /// a kernel left out of its family's list can never run another's pipeline.
    fn kernel_id(&self, kernel: &KernelInfo) -> Result<KernelId, GpuError> {
        if self.pipeline_name(kernel.id) != Some(kernel.name) {
            return Err(GpuError::UnlistedKernel(kernel.name));
        }
        self.pipeline(kernel.id);
        Ok(kernel.id)
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
        let id = self.kernel_id(&kernel.info)?;
        let workgroups = invocations.div_ceil(kernel.info.workgroup_size).max(1);
        if workgroups > self.max_workgroups {
            return Err(GpuError::TooManyWorkgroups {
                kernel: kernel.info.name,
                workgroups,
                limit: self.max_workgroups,
            });
        }
        recorder.dispatch(id, bytemuck::bytes_of(params), &buffers, workgroups);
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
        let id = self.kernel_id(&kernel.info)?;
        recorder.dispatch(id, bytemuck::bytes_of(params), &buffers, 1);
        Ok(())
    }
}

/// Whether every row start and length a vec4 kernel reads is a multiple of 4 values.
pub(crate) fn aligned(values: &[u32]) -> bool {
    values.iter().all(|v| v % 4 == 0)
}
