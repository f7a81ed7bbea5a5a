// One workgroup reduces vectors into scalar slots, `mode` as `ReduceMode`:
// 1: sum a^2 into out[slot];
// 2: sum a^2, sum a*b, sum b^2, sum (a - b)^2 into out[slot .. slot + 4] (a gradient against its
//    reference in one pass);
// 3: sum a, sum b into out[slot], out[slot + 1];
// 4: sum a into out[slot] by one invocation, a[0], a[1], ... in order (the training loss: with
//    accumulate = 1 its micro-batches then add in the very sequence of the full batch, so a
//    correctly scaled accumulation shows the full batch's loss to the last bit).
// With accumulate = 1 the results are added to the slots instead of replacing them (a loss
// summed over micro-batches). The sums run in four lanes of one vec4 that are added exactly as
// four separate scalar reductions would be.

struct ReduceParams {
    len: u32,
    mode: u32,
    slot: u32,
    accumulate: u32,
}

@group(0) @binding(0) var<uniform> dims: ReduceParams;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<vec4<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) local: vec3<u32>) {
    let t = local.x;
    if dims.mode == 4u {
        if t == 0u {
            var sum = select(0.0, out[dims.slot], dims.accumulate == 1u);
            for (var i = 0u; i < dims.len; i = i + 1u) {
                sum = sum + a[i];
            }
            out[dims.slot] = sum;
        }
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
    partial[t] = acc;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        if t < stride {
            partial[t] = partial[t] + partial[t + stride];
        }
        workgroupBarrier();
    }
    if t == 0u {
        var slots = 1u;
        if dims.mode == 2u {
            slots = 4u;
        } else if dims.mode == 3u {
            slots = 2u;
        }
        for (var j = 0u; j < slots; j = j + 1u) {
            if dims.accumulate == 1u {
                out[dims.slot + j] = out[dims.slot + j] + partial[0][j];
            } else {
                out[dims.slot + j] = partial[0][j];
            }
        }
    }
}
