// One branch of a transformer block added onto the residual stream: x[i] += branch[i] (the
// attention's or the MLP's projection forward, a LayerNorm's input gradient backward).

@group(0) @binding(1) var<storage, read> branch: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= args.rows * args.width {
        return;
    }
    x[id.x] = x[id.x] + branch[id.x];
}
