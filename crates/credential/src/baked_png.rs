//! Open Badges 3.0 baking: the signed credential travels inside the badge image, in an `iTXt`
//! chunk with the keyword `openbadgecredential`, so a learner can share one file that both shows
//! and proves the badge. The image is decoded and re-encoded with the `png` crate (which writes
//! the chunks and their CRCs); pixels, palette, transparency, gamma/colour and physical size
//! survive, animation is refused.

use png::text_metadata::ITXtChunk;
use thiserror::Error;

/// The `iTXt` keyword Open Badges 3.0 specifies for the credential.
pub const KEYWORD: &str = "openbadgecredential";
/// The largest decoded image accepted (64 MiB), so that a small file cannot make us allocate
/// an enormous pixel buffer.
const MAX_IMAGE_BYTES: usize = 64 * 1024 * 1024;
/// The largest credential text read from a compressed chunk (1 MiB; ours are a few KB).
const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// Why an image could not be baked or read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BakeError {
    #[error("not a readable PNG image: {0}")]
    NotPng(String),
    #[error("the image is too large to bake ({0} bytes of pixels)")]
    TooLarge(usize),
    #[error("animated PNG images cannot be baked")]
    Animated,
    #[error("the credential chunk cannot be read: {0}")]
    BadChunk(String),
    #[error("the baked PNG could not be written: {0}")]
    Encode(String),
}

fn not_png(error: png::DecodingError) -> BakeError {
    BakeError::NotPng(error.to_string())
}

fn encode_failed(error: png::EncodingError) -> BakeError {
    BakeError::Encode(error.to_string())
}

/// Reads the whole PNG (all chunks, before and after the image data) without transformations.
fn read_png(png_bytes: &[u8]) -> Result<(png::Info<'static>, Vec<u8>), BakeError> {
    let mut decoder = png::Decoder::new(png_bytes);
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().map_err(not_png)?;
    if reader.info().animation_control.is_some() {
        return Err(BakeError::Animated);
    }
    let size = reader.output_buffer_size();
    if size > MAX_IMAGE_BYTES {
        return Err(BakeError::TooLarge(size));
    }
    let mut pixels = vec![0; size];
    let frame = reader.next_frame(&mut pixels).map_err(not_png)?;
    pixels.truncate(frame.buffer_size());
    reader.finish().map_err(not_png)?;
    Ok((reader.info().clone(), pixels))
}

/// `png` with the credential JSON in an uncompressed `iTXt` chunk `openbadgecredential`,
/// replacing any credential it already carried.
pub fn bake(png_bytes: &[u8], credential_json: &str) -> Result<Vec<u8>, BakeError> {
    let (mut info, pixels) = read_png(png_bytes)?;
    // The decoder hands back a whole, de-interlaced image.
    info.interlaced = false;
    info.compression = png::Compression::Default;
    info.uncompressed_latin1_text.retain(|chunk| chunk.keyword != KEYWORD);
    info.compressed_latin1_text.retain(|chunk| chunk.keyword != KEYWORD);
    info.utf8_text.retain(|chunk| chunk.keyword != KEYWORD);
    info.utf8_text.push(ITXtChunk::new(KEYWORD, credential_json));
    let mut baked = Vec::new();
    let encoder = png::Encoder::with_info(&mut baked, info).map_err(encode_failed)?;
    let mut writer = encoder.write_header().map_err(encode_failed)?;
    writer.write_image_data(&pixels).map_err(encode_failed)?;
    writer.finish().map_err(encode_failed)?;
    Ok(baked)
}

/// The credential baked into `png`, or `None` when it carries none. The chunk may come before or
/// after the image data, compressed or not.
pub fn extract(png_bytes: &[u8]) -> Result<Option<String>, BakeError> {
    let mut decoder = png::Decoder::new(png_bytes);
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().map_err(not_png)?;
    // Reads the remaining chunks; the pixels are decompressed and dropped.
    reader.finish().map_err(not_png)?;
    let Some(chunk) = reader.info().utf8_text.iter().find(|chunk| chunk.keyword == KEYWORD) else {
        return Ok(None);
    };
    let mut chunk = chunk.clone();
    chunk
        .decompress_text_with_limit(MAX_TEXT_BYTES)
        .map_err(|e| BakeError::BadChunk(e.to_string()))?;
    chunk
        .get_text()
        .map(Some)
        .map_err(|e| BakeError::BadChunk(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small RGBA image, optionally with a text chunk after the image data.
    fn image(width: u32, height: u32, trailing_credential: Option<&str>) -> Vec<u8> {
        let pixels: Vec<u8> = (0..width * height * 4).map(|i| (i * 37 % 251) as u8).collect();
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, width, height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.add_text_chunk("Title".into(), "Badge".into()).unwrap();
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&pixels).unwrap();
        if let Some(text) = trailing_credential {
            let mut chunk = ITXtChunk::new(KEYWORD, text);
            chunk.compress_text().unwrap();
            writer.write_text_chunk(&chunk).unwrap();
        }
        writer.finish().unwrap();
        bytes
    }

    fn pixels_of(png_bytes: &[u8]) -> Vec<u8> {
        read_png(png_bytes).unwrap().1
    }

    #[test]
    fn a_baked_credential_round_trips_and_the_image_is_unchanged() {
        let original = image(7, 5, None);
        assert_eq!(extract(&original).unwrap(), None);
        let credential = r#"{"name":"Ünïcödé ✓","type":["VerifiableCredential"]}"#;
        let baked = bake(&original, credential).unwrap();
        assert_eq!(extract(&baked).unwrap().as_deref(), Some(credential));
        assert_eq!(pixels_of(&baked), pixels_of(&original));
        // Other text survives; baking again replaces the credential instead of adding one.
        let info = read_png(&baked).unwrap().0;
        assert_eq!(info.uncompressed_latin1_text[0].keyword, "Title");
        let rebaked = bake(&baked, "{}").unwrap();
        assert_eq!(extract(&rebaked).unwrap().as_deref(), Some("{}"));
        assert_eq!(read_png(&rebaked).unwrap().0.utf8_text.len(), 1);
    }

    #[test]
    fn a_credential_after_the_image_data_and_compressed_is_found() {
        let credential = r#"{"id":"after"}"#;
        let trailing = image(3, 3, Some(credential));
        assert_eq!(extract(&trailing).unwrap().as_deref(), Some(credential));
        let rebaked = bake(&trailing, "{}").unwrap();
        assert_eq!(extract(&rebaked).unwrap().as_deref(), Some("{}"));
        assert_eq!(read_png(&rebaked).unwrap().0.utf8_text.len(), 1);
    }

    #[test]
    fn palette_and_grey_images_keep_their_format() {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, 4, 2);
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::Two);
        encoder.set_palette(vec![0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]);
        encoder.set_trns(vec![0, 255, 255]);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0b0001_1011, 0b1110_0100]).unwrap();
        writer.finish().unwrap();
        let baked = bake(&bytes, "{}").unwrap();
        let (info, pixels) = read_png(&baked).unwrap();
        assert_eq!(info.color_type, png::ColorType::Indexed);
        assert_eq!(info.bit_depth, png::BitDepth::Two);
        assert_eq!(
            info.palette.as_deref(),
            Some(&[0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255][..])
        );
        assert_eq!(info.trns.as_deref(), Some(&[0, 255, 255][..]));
        assert_eq!(pixels, vec![0b0001_1011, 0b1110_0100]);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(extract(b""), Err(BakeError::NotPng(_))));
        assert!(matches!(extract(b"GIF89a..."), Err(BakeError::NotPng(_))));
        assert!(matches!(bake(b"\x89PNG\r\n\x1a\n", "{}"), Err(BakeError::NotPng(_))));
        let original = image(4, 4, None);
        for cut in [8, 20, 33, original.len() / 2, original.len() - 5] {
            assert!(extract(&original[..cut]).is_err(), "cut at {cut}");
            assert!(bake(&original[..cut], "{}").is_err(), "cut at {cut}");
        }
        let mut flipped = original.clone();
        let last = flipped.len() - 20;
        flipped[last] ^= 0xFF;
        let _ = extract(&flipped);
        let _ = bake(&flipped, "{}");
    }
}
