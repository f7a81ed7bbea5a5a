//! The native command-line tool; all logic lives in `gradlab::cli`.

fn main() -> std::process::ExitCode {
    gradlab::cli::main()
}
