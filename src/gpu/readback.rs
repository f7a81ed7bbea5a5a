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
    let values = {
        let mapped = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        bytemuck::cast_slice::<u8, f32>(&mapped)[..len].to_vec()
    };
    staging.unmap();
    if let Some(error) = context.take_errors().into_iter().next() {
        return Err(error);
    }
    Ok(values)
}
