//! Links the harness to the libphp of PHP_CONFIG's PHP (ext-php-rs names `-lphp`
//! but not where it is), and records that folder so it runs without LD_LIBRARY_PATH.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=PHP_CONFIG");
    let php_config = std::env::var("PHP_CONFIG").unwrap_or_else(|_| "php-config".into());
    let prefix = Command::new(&php_config)
        .arg("--prefix")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let Some(prefix) = prefix else {
        println!("cargo:warning={php_config} --prefix failed: set PHP_CONFIG to a ZTS PHP built with --enable-embed");
        return;
    };
    println!("cargo:rustc-link-search=native={prefix}/lib");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{prefix}/lib");
}
