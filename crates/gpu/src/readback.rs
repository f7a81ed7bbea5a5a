//! Reading buffers back: always asynchronous. Natively the caller's executor (pollster in tests)
//! drives the device with a blocking poll; on wasm the browser completes the mapping and nothing
//! blocks.

use super::context::GpuContext;
use super::GpuError;

/// Copies `len` f32 values out of `source` (which needs `COPY_SRC`).
pub async fn read_f32(context: &GpuContext, source: &wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
    Ok(read_f32_and_timestamps(context, source, len, None).await?.0)
}

/// The first `count` queries of a timestamp query set, resolved into `resolve` (which needs
/// `QUERY_RESOLVE` and `COPY_SRC`, 8 bytes a query) to be read.
#[derive(Debug, Clone, Copy)]
pub struct Queries<'a> {
    pub set: &'a wgpu::QuerySet,
    pub count: u32,
    pub resolve: &'a wgpu::Buffer,
}

/// Copies `len` f32 values out of `source` and, with `queries`, their timestamps (in ticks), in
/// one submission and one mapping.
pub async fn read_f32_and_timestamps(
    context: &GpuContext,
    source: &wgpu::Buffer,
    len: usize,
    queries: Option<Queries<'_>>,
) -> Result<(Vec<f32>, Vec<u64>), GpuError> {
    let bytes = (4 * len) as u64;
    if bytes > source.size() {
        return Err(GpuError::BufferTooSmall {
            what: "readback source",
            bytes: source.size(),
            needed: bytes,
        });
    }
    let value_bytes = bytes.max(4).min(source.size());
    let count = queries.map_or(0, |q| q.count);
    let tick_bytes = u64::from(count) * 8;
    if let Some(q) = queries.filter(|q| tick_bytes > q.resolve.size()) {
        return Err(GpuError::BufferTooSmall {
            what: "timestamp resolve",
            bytes: q.resolve.size(),
            needed: tick_bytes,
        });
    }
    // The timestamps follow the values, 8-byte aligned.
    let tick_offset = value_bytes.next_multiple_of(8);
    let staging = context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback staging"),
        size: tick_offset + tick_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("readback"),
    });
    encoder.copy_buffer_to_buffer(source, 0, &staging, 0, value_bytes);
    if let Some(q) = queries.filter(|_| count > 0) {
        encoder.resolve_query_set(q.set, 0..count, q.resolve, 0);
        encoder.copy_buffer_to_buffer(q.resolve, 0, &staging, tick_offset, tick_bytes);
    }
    let mapped = map_read(context, encoder, &staging).await?;
    // Copied out, not cast: a byte vector promises no alignment.
    let mut values = bytemuck::pod_collect_to_vec::<u8, f32>(&mapped[..value_bytes as usize]);
    values.truncate(len);
    let ticks = bytemuck::pod_collect_to_vec::<u8, u64>(&mapped[tick_offset as usize..]);
    Ok((values, ticks))
}

/// Submits `encoder` (whose last command fills `staging`), maps `staging` and returns its bytes;
/// errors the device reported meanwhile are returned instead.
async fn map_read(
    context: &GpuContext,
    encoder: wgpu::CommandEncoder,
    staging: &wgpu::Buffer,
) -> Result<Vec<u8>, GpuError> {
    context.queue.submit([encoder.finish()]);
    let (sender, receiver) = futures_channel::oneshot::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    #[cfg(not(target_arch = "wasm32"))]
    context
        .device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    receiver
        .await
        .map_err(|_| GpuError::Readback("the mapping was cancelled".into()))?
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    let bytes = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| GpuError::Readback(e.to_string()))?
        .to_vec();
    staging.unmap();
    if let Some(error) = context.take_errors().into_iter().next() {
        return Err(error);
    }
    Ok(bytes)
}
