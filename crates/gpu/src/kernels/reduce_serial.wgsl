// The serial half of a reduction, one invocation, `mode` one of the REDUCE_* codes:
// sum of squares, comparison, pair sums: adds the 256 partials of reduce_partials.wgsl in a
//    fixed tree (at each level, partials[t] += partials[t + stride] for stride 128, 64, ..., 1),
//    into the mode's 1, 4 or 2 slots from out[slot];
// in-order sum: sums a[offset], a[offset + 1], ... a[offset + len - 1] in order into out[slot]
//    (the training loss, once per run of neighbouring micro-batches, which is once per step: the
//    items add in the very sequence of the full batch, so a correctly scaled accumulation shows
//    the full batch's loss to the last bit).
// With accumulate = 1 the results are added to the slots instead of replacing them (a loss
// summed over micro-batches).
// The tree modes with loss_rows > 0 then also add a[loss_offset], ... in order to
// out[loss_slot], as the in-order sum with accumulate = 1 would: a step's loss sum carried by
// the gradient's reduction (one dispatch fewer); `a` is then the row losses, which the tree does
// not read.

@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn finish(j: u32, value: f32) {
    if args.accumulate == 1u {
        out[args.slot + j] = out[args.slot + j] + value;
    } else {
        out[args.slot + j] = value;
    }
}

@compute @workgroup_size(1)
fn main() {
    if args.mode == REDUCE_IN_ORDER_SUM {
        var sum = 0.0;
        if args.accumulate == 1u {
            sum = out[args.slot];
        }
        for (var i = 0u; i < args.len; i = i + 1u) {
            sum = sum + a[args.offset + i];
        }
        out[args.slot] = sum;
        return;
    }
    for (var stride = 128u; stride > 0u; stride = stride / 2u) {
        for (var t = 0u; t < stride; t = t + 1u) {
            partials[t] = partials[t] + partials[t + stride];
        }
    }
    let total = partials[0];
    finish(0u, total.x);
    if args.mode == REDUCE_COMPARISON {
        finish(1u, total.y);
        finish(2u, total.z);
        finish(3u, total.w);
    } else if args.mode == REDUCE_PAIR_SUMS {
        finish(1u, total.y);
    }
    if args.loss_rows > 0u {
        var loss = out[args.loss_slot];
        for (var i = 0u; i < args.loss_rows; i = i + 1u) {
            loss = loss + a[args.loss_offset + i];
        }
        out[args.loss_slot] = loss;
    }
}
