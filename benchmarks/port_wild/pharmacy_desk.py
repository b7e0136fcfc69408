# ruff: noqa  (a specimen of code found in the wild, kept in its own style)
"""A pharmacy counter, in the style an LLM writes when asked for "a tool environment for an
agent": state in plain dicts of dicts on ``self``, every tool returning
``{"success": True, "data": ...}`` or ``{"success": False, "error": ...}``."""

from typing import Any, Dict, List, Optional

MAX_REFILLS_PER_DAY = 2
CONTROLLED_SCHEDULES = ["II", "III"]


class PharmacyDesk:
    """A pharmacy desk: patients, medications in stock, prescriptions and a dispensing log."""

    def __init__(self, config: Dict[str, Any]):
        self.patients: Dict[str, Dict[str, Any]] = config.get("patients", {})
        self.medications: Dict[str, Dict[str, Any]] = config.get("medications", {})
        self.prescriptions: Dict[str, Dict[str, Any]] = config.get("prescriptions", {})
        self.dispensing_log: List[Dict[str, Any]] = config.get("dispensing_log", [])
        self.day: int = config.get("day", 1)
        self.pharmacist_on_duty: Optional[str] = config.get("pharmacist_on_duty")

    def get_patient(self, patient_id: str) -> Dict[str, Any]:
        """Look a patient up.

        Args:
            patient_id (str): The patient's id, e.g. "P100".
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"Patient {patient_id} not found"}
        return {"success": True, "data": self.patients[patient_id]}

    def search_medications(self, query: str, in_stock_only: bool = False) -> Dict[str, Any]:
        """Find medications whose name contains the query (case-insensitive).

        Args:
            query (str): Part of the medication's name.
            in_stock_only (bool): Only list medications with stock left.
        """
        query = query.strip().lower()
        if not query:
            return {"success": False, "error": "Query must not be empty"}
        found = []
        for med_id, med in self.medications.items():
            if query in med["name"].lower():
                if in_stock_only and med["stock"] <= 0:
                    continue
                found.append({"id": med_id, "name": med["name"], "stock": med["stock"]})
        return {"success": True, "data": found}

    def check_interactions(self, patient_id: str, medication_id: str) -> Dict[str, Any]:
        """List the patient's active medications that interact with a medication.

        Args:
            patient_id (str): The patient's id.
            medication_id (str): The medication to check.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"Patient {patient_id} not found"}
        if medication_id not in self.medications:
            return {"success": False, "error": f"Medication {medication_id} not found"}
        interacts_with = set(self.medications[medication_id].get("interactions", []))
        active = [rx["medication_id"] for rx in self.prescriptions.values()
                  if rx["patient_id"] == patient_id and rx["status"] == "active"]
        conflicts = sorted(m for m in active if m in interacts_with)
        return {"success": True, "data": {"conflicts": conflicts, "safe": not conflicts}}

    def create_prescription(self, patient_id: str, medication_id: str, quantity: int,
                            refills: int = 0) -> Dict[str, Any]:
        """Write a new prescription for a patient.

        Args:
            patient_id (str): The patient's id.
            medication_id (str): The medication prescribed.
            quantity (int): Units per fill; at least 1.
            refills (int): Refills allowed after the first fill (0 to 5).
        """
        if self.pharmacist_on_duty is None:
            return {"success": False, "error": "No pharmacist on duty"}
        if patient_id not in self.patients:
            return {"success": False, "error": f"Patient {patient_id} not found"}
        if medication_id not in self.medications:
            return {"success": False, "error": f"Medication {medication_id} not found"}
        if quantity < 1:
            return {"success": False, "error": "Quantity must be at least 1"}
        if refills < 0 or refills > 5:
            return {"success": False, "error": "Refills must be between 0 and 5"}
        med = self.medications[medication_id]
        if med["schedule"] in CONTROLLED_SCHEDULES and refills > 0:
            return {"success": False, "error": f"Schedule {med['schedule']} drugs cannot have refills"}
        rx_id = f"RX{len(self.prescriptions) + 1:04d}"
        self.prescriptions[rx_id] = {
            "patient_id": patient_id,
            "medication_id": medication_id,
            "quantity": quantity,
            "refills_left": refills,
            "status": "active",
            "fills": 0,
        }
        return {"success": True, "data": {"prescription_id": rx_id}}

    def fill_prescription(self, prescription_id: str) -> Dict[str, Any]:
        """Dispense one fill of a prescription, taking the units out of stock.

        Args:
            prescription_id (str): The prescription's id, e.g. "RX0001".
        """
        rx = self.prescriptions.get(prescription_id)
        if rx is None:
            return {"success": False, "error": f"Prescription {prescription_id} not found"}
        if rx["status"] != "active":
            return {"success": False, "error": f"Prescription is {rx['status']}"}
        fills_today = sum(1 for entry in self.dispensing_log
                          if entry["prescription_id"] == prescription_id and entry["day"] == self.day)
        if fills_today >= MAX_REFILLS_PER_DAY:
            return {"success": False, "error": "Too many fills today"}
        med = self.medications[rx["medication_id"]]
        if med["stock"] < rx["quantity"]:
            return {"success": False, "error": f"Insufficient stock: {med['stock']} left"}
        if rx["fills"] > 0:
            if rx["refills_left"] == 0:
                rx["status"] = "exhausted"
                return {"success": False, "error": "No refills left"}
            rx["refills_left"] -= 1
        med["stock"] -= rx["quantity"]
        rx["fills"] += 1
        self.dispensing_log.append({"prescription_id": prescription_id, "day": self.day,
                                    "quantity": rx["quantity"]})
        total = round(med["unit_price"] * rx["quantity"], 2)
        return {"success": True, "data": {"dispensed": rx["quantity"], "total_price": total,
                                          "refills_left": rx["refills_left"]}}

    def cancel_prescription(self, prescription_id: str, reason: str = "") -> Dict[str, Any]:
        """Cancel an active prescription.

        Args:
            prescription_id (str): The prescription's id.
            reason (str): Why it is cancelled (kept on the prescription).
        """
        rx = self.prescriptions.get(prescription_id)
        if rx is None:
            return {"success": False, "error": f"Prescription {prescription_id} not found"}
        if rx["status"] == "cancelled":
            return {"success": False, "error": "Prescription already cancelled"}
        rx["status"] = "cancelled"
        if reason:
            rx["cancel_reason"] = reason
        return {"success": True, "data": {"prescription_id": prescription_id, "status": "cancelled"}}

    def list_prescriptions(self, patient_id: str, status: Optional[str] = None) -> Dict[str, Any]:
        """List a patient's prescriptions, optionally only those with a status.

        Args:
            patient_id (str): The patient's id.
            status (str): "active", "exhausted" or "cancelled"; all when left out.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"Patient {patient_id} not found"}
        rows = []
        for rx_id, rx in self.prescriptions.items():
            if rx["patient_id"] != patient_id:
                continue
            if status is not None and rx["status"] != status:
                continue
            rows.append({"id": rx_id, **rx})
        return {"success": True, "data": rows}

    def restock(self, medication_id: str, units: int) -> Dict[str, Any]:
        """Add units of a medication to stock.

        Args:
            medication_id (str): The medication's id.
            units (int): How many units arrived; at least 1.
        """
        if medication_id not in self.medications:
            return {"success": False, "error": f"Medication {medication_id} not found"}
        if units <= 0:
            return {"success": False, "error": "Units must be positive"}
        self.medications[medication_id]["stock"] += units
        return {"success": True, "data": {"stock": self.medications[medication_id]["stock"]}}

    def end_day(self) -> Dict[str, Any]:
        """Close the day: the next fills count towards a new day's limit."""
        dispensed = sum(e["quantity"] for e in self.dispensing_log if e["day"] == self.day)
        self.day += 1
        return {"success": True, "data": {"day": self.day, "units_dispensed_yesterday": dispensed}}

    def sign_in(self, pharmacist: str) -> Dict[str, Any]:
        """Put a pharmacist on duty; prescriptions need one.

        Args:
            pharmacist (str): The pharmacist's name.
        """
        if not pharmacist:
            return {"success": False, "error": "Name required"}
        previous = self.pharmacist_on_duty
        self.pharmacist_on_duty = pharmacist
        return {"success": True, "data": {"on_duty": pharmacist, "replaced": previous}}
