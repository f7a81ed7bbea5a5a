//! The content package a course author uploads: the release build (`dist/`) and its
//! `imsmanifest.xml` in one zip, checked after it is built.

use std::collections::BTreeSet;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::manifest::{
    check_manifest, manifest_xml, CheckError, ManifestError, ManifestSummary, PackageOptions, LAUNCH_PAGE,
};
use super::ScormVersion;

pub const MANIFEST: &str = "imsmanifest.xml";

#[derive(Debug, Error)]
pub enum PackageError {
    #[error("{path}: {detail}")]
    Io { path: PathBuf, detail: String },
    #[error("{0} has no index.html: build the app first (`trunk build --release`)")]
    NoIndex(PathBuf),
    #[error(
        "{page} loads \"/{file}\" from the server's root, which an LMS does not serve: build with \
         relative URLs (`trunk build --release --public-url ./`, as Trunk.toml sets)"
    )]
    AbsoluteUrl { page: String, file: String },
    #[error("{0} holds a path that is not plain UTF-8")]
    BadPath(PathBuf),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("the package is not a readable zip: {0}")]
    Zip(String),
    #[error("the package has no {MANIFEST} at its root")]
    NoManifest,
    #[error("the package fails the manifest check: {0}")]
    Check(#[from] CheckError),
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> PackageError + '_ {
    move |e| PackageError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Every file under `dist`, as `/`-separated paths relative to it.
pub fn list_files(dist: &Path) -> Result<BTreeSet<String>, PackageError> {
    let mut files = BTreeSet::new();
    let mut stack = vec![dist.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io_error(&dir))? {
            let path = entry.map_err(io_error(&dir))?.path();
            let metadata = std::fs::metadata(&path).map_err(io_error(&path))?;
            if metadata.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(dist)
                .ok()
                .and_then(|p| {
                    p.components()
                        .map(|c| c.as_os_str().to_str())
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| PackageError::BadPath(path.clone()))?
                .join("/");
            // A manifest left in dist/ would be shadowed by the one written here; the release
            // build's gzip twins are for a web server, and an LMS serves the files themselves.
            if relative != MANIFEST && !relative.ends_with(".gz") {
                files.insert(relative);
            }
        }
    }
    if !files.contains(LAUNCH_PAGE) {
        return Err(PackageError::NoIndex(dist.to_path_buf()));
    }
    Ok(files)
}

/// Refuses a build whose page `page` (`html`) loads any of its files from the server's root:
/// inside an LMS the package lives in a sub-folder.
pub fn check_relative_urls(page: &str, html: &str, files: &BTreeSet<String>) -> Result<(), PackageError> {
    for file in files {
        for quote in ['"', '\''] {
            if html.contains(&format!("{quote}/{file}")) {
                return Err(PackageError::AbsoluteUrl {
                    page: page.to_string(),
                    file: file.clone(),
                });
            }
        }
    }
    Ok(())
}

/// What was built.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageReport {
    pub bytes: usize,
    pub files: usize,
    pub summary: ManifestSummary,
}

/// Builds the package in memory (files in a fixed order with a fixed time stamp, so the same
/// build gives the same zip) and checks it.
pub fn build(dist: &Path, options: &PackageOptions) -> Result<(Vec<u8>, PackageReport), PackageError> {
    let files = list_files(dist)?;
    // Every document of the app (the Lab's index.html, which every SCO launches, and the other
    // pages' document it hands over to).
    for page in files.iter().filter(|file| file.ends_with(".html")) {
        let path = dist.join(page);
        let html = std::fs::read_to_string(&path).map_err(io_error(&path))?;
        check_relative_urls(page, &html, &files)?;
    }
    let manifest = manifest_xml(options, &files)?;
    let zip_error = |e: zip::result::ZipError| PackageError::Zip(e.to_string());
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.start_file(MANIFEST, deflated).map_err(zip_error)?;
    zip.write_all(manifest.as_bytes())
        .map_err(io_error(Path::new(MANIFEST)))?;
    for file in &files {
        let path = dist.join(file);
        let bytes = std::fs::read(&path).map_err(io_error(&path))?;
        zip.start_file(file.as_str(), deflated).map_err(zip_error)?;
        zip.write_all(&bytes).map_err(io_error(&path))?;
    }
    let bytes = zip.finish().map_err(zip_error)?.into_inner();
    let summary = check(&bytes, options.version)?;
    let report = PackageReport {
        bytes: bytes.len(),
        files: files.len() + 1,
        summary,
    };
    Ok((bytes, report))
}

/// Builds the package and writes it to `out` (through a temporary file beside it, so a failed
/// run never leaves half a zip).
pub fn write(dist: &Path, out: &Path, options: &PackageOptions) -> Result<PackageReport, PackageError> {
    let (bytes, report) = build(dist, options)?;
    let partial = out.with_extension("zip.partial");
    std::fs::write(&partial, &bytes).map_err(io_error(&partial))?;
    std::fs::rename(&partial, out).map_err(io_error(out))?;
    Ok(report)
}

/// The structural check of a package: a readable zip with `imsmanifest.xml` at its root that
/// passes [`check_manifest`] against the zip's own file list.
pub fn check(bytes: &[u8], version: ScormVersion) -> Result<ManifestSummary, PackageError> {
    let zip_error = |e: zip::result::ZipError| PackageError::Zip(e.to_string());
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
    let names: BTreeSet<String> = archive
        .file_names()
        .map(|n| n.map(|n| n.into_owned()))
        .collect::<Result<_, _>>()
        .map_err(zip_error)?;
    let mut manifest = String::new();
    archive
        .by_name(MANIFEST)
        .map_err(|_| PackageError::NoManifest)?
        .read_to_string(&mut manifest)
        .map_err(|e| PackageError::Zip(e.to_string()))?;
    Ok(check_manifest(&manifest, version, &names)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_i18n::Language;

    fn dist(index: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), index).unwrap();
        std::fs::write(dir.path().join("app-1.js"), "export default 1;").unwrap();
        std::fs::write(dir.path().join("app-1_bg.wasm"), [0u8, 97, 115, 109]).unwrap();
        std::fs::write(dir.path().join("app-1_bg.wasm.gz"), "a gzip twin").unwrap();
        std::fs::create_dir(dir.path().join("fonts")).unwrap();
        std::fs::write(dir.path().join("fonts/a.woff2"), "font").unwrap();
        dir
    }

    const RELATIVE: &str =
        r#"<script type="module">import init from './app-1.js'; init({ module_or_path: './app-1_bg.wasm' });</script>"#;

    #[test]
    fn a_package_holds_the_manifest_and_every_file_and_passes_the_check() {
        let dir = dist(RELATIVE);
        let options = PackageOptions::all(ScormVersion::Scorm2004, Language::English, 80);
        let (bytes, report) = build(dir.path(), &options).unwrap();
        assert_eq!(report.files, 5);
        let mut archive = ZipArchive::new(Cursor::new(&bytes)).unwrap();
        let names: BTreeSet<String> = archive.file_names().map(|n| n.unwrap().into_owned()).collect();
        assert!(names.contains("imsmanifest.xml") && names.contains("fonts/a.woff2"));
        assert!(
            !names.contains("app-1_bg.wasm.gz"),
            "gzip twins stay out: an LMS serves the files"
        );
        let mut wasm = Vec::new();
        archive
            .by_name("app-1_bg.wasm")
            .unwrap()
            .read_to_end(&mut wasm)
            .unwrap();
        assert_eq!(wasm, [0u8, 97, 115, 109]);
        let (again, _) = build(dir.path(), &options).unwrap();
        assert_eq!(again, bytes, "the same build gives the same zip");
        let out = dir.path().join("package.zip");
        let written = write(dir.path(), &out, &options).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), bytes);
        assert_eq!(written, report);
        assert!(!out.with_extension("zip.partial").exists());
    }

    #[test]
    fn a_build_with_root_urls_or_no_index_is_refused_with_what_to_do() {
        let dir = dist(r#"<link rel="stylesheet" href="/app-1.js"/>"#);
        let options = PackageOptions::all(ScormVersion::Scorm12, Language::English, 80);
        let error = build(dir.path(), &options).unwrap_err();
        assert!(
            matches!(&error, PackageError::AbsoluteUrl { page, file } if page == "index.html" && file == "app-1.js"),
            "{error}"
        );
        assert!(error.to_string().contains("--public-url ./"));
        // The other document is checked as the Lab's is.
        let two = dist(RELATIVE);
        std::fs::write(two.path().join("pages.html"), r#"<script src='/app-1.js'></script>"#).unwrap();
        let error = build(two.path(), &options).unwrap_err();
        assert!(
            matches!(&error, PackageError::AbsoluteUrl { page, file } if page == "pages.html" && file == "app-1.js"),
            "{error}"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(build(empty.path(), &options), Err(PackageError::NoIndex(_))));
        let error = build(&empty.path().join("missing"), &options).unwrap_err();
        assert!(matches!(error, PackageError::Io { .. }), "{error}");
    }

    #[test]
    fn the_check_refuses_what_is_not_a_package() {
        assert!(matches!(
            check(b"not a zip", ScormVersion::Scorm12),
            Err(PackageError::Zip(_))
        ));
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        zip.start_file("index.html", SimpleFileOptions::default()).unwrap();
        zip.write_all(b"<p>hi</p>").unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        assert!(matches!(
            check(&bytes, ScormVersion::Scorm12),
            Err(PackageError::NoManifest)
        ));
    }
}
