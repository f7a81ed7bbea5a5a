// Adds dgamma[f] += sum_i dout[i, f] * xhat[i, f] and dbeta[f] += sum_i dout[i, f] into grads,
// one invocation per feature, rows in order.

@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> xhat: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

// 16: one invocation per feature, and one workgroup runs on one thread of a software adapter.
@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let f = id.x;
    if f >= args.width {
        return;
    }
    var dgamma = grads[args.gamma_offset + f];
    var dbeta = grads[args.beta_offset + f];
    for (var i = 0u; i < args.rows; i = i + 1u) {
        let e = i * args.width + f;
        dgamma = dgamma + dout[e] * xhat[e];
        dbeta = dbeta + dout[e];
    }
    grads[args.gamma_offset + f] = dgamma;
    grads[args.beta_offset + f] = dbeta;
}
