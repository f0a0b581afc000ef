<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/** A refusal a person must fix (the configuration class): never retryable. */
abstract class ConfigurationRefusalException extends PolicyViolationException
{
}
