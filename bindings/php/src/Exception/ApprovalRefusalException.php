<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/**
 * A call that waits for a person's approval (the approval class): the host
 * asks a person, or an approver approves it, and the call is made again
 * with the grant. The model must not retry it on its own.
 */
abstract class ApprovalRefusalException extends PolicyViolationException
{
}
