<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/**
 * A consumer name the policy does not know: no `consumer` block binds it and
 * the policy does not say `unknown-consumers admitted`, or it is a slip for a
 * bound one (`Support-bot` for `support-bot`). Never a consumer without a
 * profile by accident.
 */
final class UnknownConsumerException extends ToolgateException
{
}
