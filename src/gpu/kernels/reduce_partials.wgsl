// The parallel half of a reduction into scalar slots, `mode` as `ReduceMode`: 256 invocations,
// invocation t summing elements t, t + 256, t + 512, ... into partials[t]:
// 1: a^2 in lane x;
// 2: a^2, a*b, b^2, (a - b)^2 in lanes x, y, z, w (a gradient against its reference in one pass);
// 3: a, b in lanes x, y (test loss and correct predictions in one pass).
// reduce_serial.wgsl then adds the 256 partials in a fixed tree. There are no barriers: a
// software adapter runs a workgroup with barriers as one coroutine per four invocations, which
// cost it far more than the sums (measured: ~0.5 ms per reduction on SwiftShader).

struct ReduceParams {
    len: u32,
    mode: u32,
    slot: u32,
    accumulate: u32,
    offset: u32,
    loss_rows: u32,
    loss_offset: u32,
    loss_slot: u32,
}

@group(0) @binding(0) var<uniform> dims: ReduceParams;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let t = id.x;
    if t >= 256u {
        return;
    }
    var acc = vec4<f32>(0.0);
    for (var i = t; i < dims.len; i = i + 256u) {
        let x = a[i];
        switch dims.mode {
            case 1u: { acc.x = acc.x + x * x; }
            case 2u: {
                let y = b[i];
                let d = x - y;
                acc = acc + vec4<f32>(x * x, x * y, y * y, d * d);
            }
            default: { acc = acc + vec4<f32>(x, b[i], 0.0, 0.0); }
        }
    }
    partials[t] = acc;
}
