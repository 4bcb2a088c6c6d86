//! The `spindle` binary: parse the command line, run it through the library, report errors once.

fn main() {
    let code = match spindle::run_from_args(std::env::args_os()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("Error: {err:#}");
            1
        }
    };
    std::process::exit(code);
}
