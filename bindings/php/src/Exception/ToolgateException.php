<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/**
 * Every failure of the library. The code is the C ABI status
 * (TOOLGATE_ERR_*); nothing that fails is ever an allow.
 */
class ToolgateException extends \RuntimeException
{
}
