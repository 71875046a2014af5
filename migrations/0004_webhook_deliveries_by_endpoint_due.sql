DROP INDEX `webhook_deliveries_endpoint_idx`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_idx` ON `webhook_deliveries` (`endpoint_id`,`status`,`next_attempt_at`);