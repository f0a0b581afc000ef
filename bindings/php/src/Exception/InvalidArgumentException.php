<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/** An argument is out of its domain (a role, a malformed live tool, an HTTP status, a tool id, bytes that are not UTF-8). */
final class InvalidArgumentException extends ToolgateException
{
}
