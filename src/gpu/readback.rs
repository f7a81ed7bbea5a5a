//! Reading buffers back: always asynchronous. Natively the caller's executor (pollster in tests)
//! drives the device with a blocking poll; on wasm the browser completes the mapping and nothing
//! blocks.

use super::context::GpuContext;
use super::GpuError;

/// Copies `len` f32 values out of `source` (which needs `COPY_SRC`).
pub async fn read_f32(context: &GpuContext, source: &wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
    let bytes = (4 * len) as u64;
    if bytes > source.size() {
        return Err(GpuError::Shape(format!(
            "reading {bytes} bytes from a buffer of {}",
            source.size()
        )));
    }
    let staging = context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback staging"),
        size: bytes.max(4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("readback"),
    });
    encoder.copy_buffer_to_buffer(source, 0, &staging, 0, bytes.max(4).min(source.size()));
    let bytes = map_read(context, encoder, &staging).await?;
    // Copied out, not cast: a byte vector promises no alignment.
    let mut values = bytemuck::pod_collect_to_vec::<u8, f32>(&bytes);
    values.truncate(len);
    Ok(values)
}

/// Resolves the first `count` queries of `set` into `resolve` (which needs `QUERY_RESOLVE` and
/// `COPY_SRC`, 8 bytes a query) and reads the timestamps back, in ticks.
pub async fn read_timestamps(
    context: &GpuContext,
    set: &wgpu::QuerySet,
    count: u32,
    resolve: &wgpu::Buffer,
) -> Result<Vec<u64>, GpuError> {
    let bytes = u64::from(count.max(1)) * 8;
    if bytes > resolve.size() {
        return Err(GpuError::Shape(format!(
            "resolving {count} timestamps into a buffer of {} bytes",
            resolve.size()
        )));
    }
    let staging = context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("timestamp staging"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("timestamp readback"),
    });
    if count > 0 {
        encoder.resolve_query_set(set, 0..count, resolve, 0);
    }
    encoder.copy_buffer_to_buffer(resolve, 0, &staging, 0, bytes);
    let mapped = map_read(context, encoder, &staging).await?;
    let ticks = bytemuck::pod_collect_to_vec::<u8, u64>(&mapped);
    Ok(ticks.into_iter().take(count as usize).collect())
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
