// y[i, o] = b[o] + sum_k x[i, k] * W[o, k], W stored [fan_out, fan_in] row-major inside `params`.
// One invocation per output element.

struct Dims {
    rows: u32,
    fan_in: u32,
    fan_out: u32,
    weight_offset: u32,
    bias_offset: u32,
    x_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.x;
    if index >= dims.rows * dims.fan_out {
        return;
    }
    let i = index / dims.fan_out;
    let o = index % dims.fan_out;
    var acc = params[dims.bias_offset + o];
    for (var k = 0u; k < dims.fan_in; k = k + 1u) {
        acc = acc + x[dims.x_offset + i * dims.fan_in + k] * params[dims.weight_offset + o * dims.fan_in + k];
    }
    y[index] = acc;
}
