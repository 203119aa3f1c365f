//! `dgatd` command-line program; all the work is in the library.
fn main() -> anyhow::Result<()> {
    dgatd::cli::main().map_err(|e| anyhow::anyhow!("{e}"))
}
