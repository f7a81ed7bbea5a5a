// BatchNorm in evaluation mode: the running statistics normalize, then the activation after
// the norm is applied (one dispatch). One invocation per element.

@group(0) @binding(1) var<storage, read> z: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read> running: array<f32>;
@group(0) @binding(4) var<storage, read_write> a: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let e = id.x;
    if e >= args.len {
        return;
    }
    let f = e % args.width;
    let mean = running[args.running_offset + f];
    let variance = running[args.running_offset + args.width + f];
    let x = (z[e] - mean) / sqrt(variance + args.eps);
    let normed = params[args.gamma_offset + f] * x + params[args.beta_offset + f];
    a[e] = activate(args.activation, normed);
}
