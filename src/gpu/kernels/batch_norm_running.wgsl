// BatchNorm running statistics, as PyTorch: running = (1 - m) running + m batch, with the
// unbiased variance tracked. One invocation per feature. Buffers: means then variances.

struct RunningStatsParams {
    width: u32,
    rows: u32,
    offset: u32,
    momentum: f32,
}

@group(0) @binding(0) var<uniform> dims: RunningStatsParams;
@group(0) @binding(1) var<storage, read> stats: array<f32>;
@group(0) @binding(2) var<storage, read_write> running: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let f = id.x;
    if f >= dims.width {
        return;
    }
    let keep = 1.0 - dims.momentum;
    let unbias = f32(dims.rows) / f32(max(dims.rows, 2u) - 1u);
    let mean_slot = dims.offset + f;
    let var_slot = dims.offset + dims.width + f;
    running[mean_slot] = keep * running[mean_slot] + dims.momentum * stats[f];
    running[var_slot] = keep * running[var_slot] + dims.momentum * stats[dims.width + f] * unbias;
}
