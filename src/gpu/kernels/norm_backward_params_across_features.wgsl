// norm_backward_params.wgsl for widths that are multiples of 4: four features per invocation as
// the lanes of a vec4, each lane adding its rows in order exactly as the scalar kernel does (the
// order that keeps accumulation bit-identical).

struct NormGradientParams {
    rows: u32,
    width: u32,
    gamma_offset: u32,
    beta_offset: u32,
}

@group(0) @binding(0) var<uniform> dims: NormGradientParams;
@group(0) @binding(1) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> xhat: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

// 4: a 64-wide layer is 16 invocations, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let quad = id.x;
    let first = 4u * quad;
    if first >= dims.width {
        return;
    }
    let quads = dims.width / 4u;
    let g = dims.gamma_offset + first;
    let b = dims.beta_offset + first;
    var dgamma = vec4<f32>(grads[g], grads[g + 1u], grads[g + 2u], grads[g + 3u]);
    var dbeta = vec4<f32>(grads[b], grads[b + 1u], grads[b + 2u], grads[b + 3u]);
    for (var i = 0u; i < dims.rows; i = i + 1u) {
        let e = i * quads + quad;
        dgamma = dgamma + dout[e] * xhat[e];
        dbeta = dbeta + dout[e];
    }
    for (var j = 0u; j < 4u; j = j + 1u) {
        grads[g + j] = dgamma[j];
        grads[b + j] = dbeta[j];
    }
}
