<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/** The configuration is not in the table. */
final class UnknownConfigurationException extends ToolgateException
{
}
