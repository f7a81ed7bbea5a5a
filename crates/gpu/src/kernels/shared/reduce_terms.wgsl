// What element i of a reduction adds to its invocation's partial sums, `mode` one of the REDUCE_*
// codes generated from `ReduceMode` (x = a[i]; the second operand read from `b`, array<f32>,
// which the including kernel declares):
// sum of squares: x^2 in lane x;
// comparison: x^2, x*y, y^2, (x - y)^2 in lanes x, y, z, w (a gradient against its reference);
// pair sums: x, y in lanes x, y (test loss and correct predictions in one pass);
// anything else: NaN.

fn reduce_terms(mode: u32, x: f32, i: u32) -> vec4<f32> {
    switch mode {
        case REDUCE_SUM_OF_SQUARES: { return vec4<f32>(x * x, 0.0, 0.0, 0.0); }
        case REDUCE_COMPARISON: {
            let y = b[i];
            let d = x - y;
            return vec4<f32>(x * x, x * y, y * y, d * d);
        }
        case REDUCE_PAIR_SUMS: { return vec4<f32>(x, b[i], 0.0, 0.0); }
        default: { return vec4<f32>(bitcast<f32>(0x7fc00000u | mode)); }
    }
}
