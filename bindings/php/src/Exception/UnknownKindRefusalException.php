<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/** A refusal of a kind this package does not know (a newer library's): still a refusal, never success. */
final class UnknownKindRefusalException extends ConfigurationRefusalException
{
}
