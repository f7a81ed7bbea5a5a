// norm_backward_input.wgsl for BatchNorm-shaped sets (see norm_forward_across_sets.wgsl): four
// sets per invocation as the lanes of a vec4, each lane in the scalar kernel's order.
// dz = rstd / n * (n * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), dxhat = dout * gamma.

struct NormParams {
    sets: u32,
    len: u32,
    set_stride: u32,
    item_stride: u32,
    width: u32,
    gamma_offset: u32,
    beta_offset: u32,
    eps: f32,
    activation: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> dims: NormParams;
@group(0) @binding(1) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> xhat: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> stats: array<f32>;
@group(0) @binding(4) var<storage, read> params: array<f32>;
@group(0) @binding(5) var<storage, read_write> dz: array<vec4<f32>>;

// 4: a 64-wide layer is 16 invocations, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let quad = id.x;
    let first = 4u * quad;
    if first >= dims.sets {
        return;
    }
    let n = f32(dims.len);
    let stride = dims.item_stride / 4u;
    let g0 = dims.gamma_offset + first;
    let gamma = vec4<f32>(params[g0], params[g0 + 1u], params[g0 + 2u], params[g0 + 3u]);
    var sum = vec4<f32>(0.0);
    var dot = vec4<f32>(0.0);
    for (var k = 0u; k < dims.len; k = k + 1u) {
        let e = k * stride + quad;
        let g = dout[e] * gamma;
        sum = sum + g;
        dot = dot + g * xhat[e];
    }
    let r = 2u * dims.sets + first;
    let scale = vec4<f32>(stats[r], stats[r + 1u], stats[r + 2u], stats[r + 3u]) / n;
    for (var k = 0u; k < dims.len; k = k + 1u) {
        let e = k * stride + quad;
        let g = dout[e] * gamma;
        dz[e] = scale * (n * g - sum - xhat[e] * dot);
    }
}
