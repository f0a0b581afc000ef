<?php

declare(strict_types=1);

// opcache.preload script for PHP-FPM (README.md): compiles the package's
// classes into shared memory once per server start. The FFI scope itself
// comes from php.ini's `ffi.preload` (bin/toolgate-ffi-preload-header), which
// works whatever user the FPM master runs as.
foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator(__DIR__ . '/src')) as $file) {
    if ($file->isFile() && $file->getExtension() === 'php') {
        opcache_compile_file($file->getPathname());
    }
}
