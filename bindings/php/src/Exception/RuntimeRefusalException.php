<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/** A refusal the agent may fix by changing its request (the runtime class). */
abstract class RuntimeRefusalException extends PolicyViolationException
{
}
