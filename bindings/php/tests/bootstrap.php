<?php

declare(strict_types=1);

// PSR-4 autoloading for the tests without Composer (composer.json declares
// the same prefixes): Toolgate\ -> src/, Toolgate\Tests\ -> tests/,
// Toolgate\Examples\NrLlm\ -> examples/nr_llm/.
$composer = __DIR__ . '/../vendor/autoload.php';
if (is_file($composer)) {
    require $composer;
} else {
    spl_autoload_register(static function (string $class): void {
        $prefixes = [
            'Toolgate\\Tests\\' => __DIR__ . '/',
            'Toolgate\\Examples\\NrLlm\\' => __DIR__ . '/../examples/nr_llm/',
            'Toolgate\\' => __DIR__ . '/../src/',
        ];
        foreach ($prefixes as $prefix => $dir) {
            if (str_starts_with($class, $prefix)) {
                $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
                if (is_file($file)) {
                    require $file;
                }
                return;
            }
        }
    });
}
if (!extension_loaded('ffi')) {
    fwrite(STDERR, "the ffi extension is required\n");
    exit(1);
}
