// One workgroup reduces a vector to one number in out[slot]:
// mode 0: sum a, 1: sum a^2, 2: sum a*b, 3: sum (a - b)^2. With accumulate = 1 the result is
// added to out[slot] instead of replacing it (a loss summed over micro-batches).

struct Dims {
    len: u32,
    mode: u32,
    slot: u32,
    accumulate: u32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) local: vec3<u32>) {
    let t = local.x;
    var acc = 0.0;
    for (var i = t; i < dims.len; i = i + 256u) {
        let x = a[i];
        switch dims.mode {
            case 0u: { acc = acc + x; }
            case 1u: { acc = acc + x * x; }
            case 2u: { acc = acc + x * b[i]; }
            default: { let d = x - b[i]; acc = acc + d * d; }
        }
    }
    partial[t] = acc;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        if t < stride {
            partial[t] = partial[t] + partial[t + stride];
        }
        workgroupBarrier();
    }
    if t == 0u {
        if dims.accumulate == 1u {
            out[dims.slot] = out[dims.slot] + partial[0];
        } else {
            out[dims.slot] = partial[0];
        }
    }
}
